// One experiment's results: per arm what it measured, each metric's mean with its 95% interval
// (numbers and a bar on a scale shared by the arms), the comparison with the control, and the decision.
import { formatCount, formatDate, formatMs, formatPercent } from '../../components/ui.js';
import { IntervalBar, scaleOf } from './interval-bar.js';
import { formatMetric, type ArmResult, type Decision } from './types.js';

export function ArmsTable({ arms }: { arms: ArmResult[] }) {
  return (
    <div class="table-wrap" tabIndex={0}>
      <table>
        <caption class="visually-hidden">Results per arm</caption>
        <thead>
          <tr>
            <th scope="col">Arm</th>
            <th scope="col" class="num">Requests</th>
            <th scope="col" class="num">Units</th>
            <th scope="col" class="num">Cost / request</th>
            <th scope="col" class="num">Latency p50</th>
            <th scope="col" class="num">Latency p95</th>
            <th scope="col" class="num">Error rate</th>
            <th scope="col" class="num">Failed over</th>
            <th scope="col" class="num">Cache hits</th>
          </tr>
        </thead>
        <tbody>
          {arms.map((arm, index) => (
            <tr key={arm.name}>
              <th scope="row">
                {arm.name}
                {index === 0 && <span class="muted-text"> (control)</span>}
                <div class="muted-text">
                  {[arm.model, arm.strategy].filter(Boolean).join(' · ') || 'the requested model'} · weight {arm.weight}
                </div>
              </th>
              <td class="num">{formatCount(arm.requests)}</td>
              <td class="num">{formatCount(arm.units)}</td>
              <td class="num">{formatMetric('cost', arm.cost_per_request)}</td>
              <td class="num">
                {formatMs(arm.latency_ms?.p50)}
                {arm.latency_ms?.p50_ci_low != null && <div class="muted-text">{`${formatMs(arm.latency_ms.p50_ci_low)}–${formatMs(arm.latency_ms.p50_ci_high)}`}</div>}
              </td>
              <td class="num">
                {formatMs(arm.latency_ms?.p95)}
                {arm.latency_ms?.p95_ci_low != null && <div class="muted-text">{`${formatMs(arm.latency_ms.p95_ci_low)}–${formatMs(arm.latency_ms.p95_ci_high)}`}</div>}
              </td>
              <td class="num">{formatPercent(arm.error_rate, 2)}</td>
              <td class="num">{formatCount(arm.failed_over)}</td>
              <td class="num">{formatCount(arm.cache_hits)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function MetricTable({ metric, arms }: { metric: string; arms: ArmResult[] }) {
  const scale = scaleOf(arms.flatMap((arm) => [arm.metrics[metric]?.ci_low, arm.metrics[metric]?.mean, arm.metrics[metric]?.ci_high]));
  return (
    <div class="table-wrap" tabIndex={0}>
      <table>
        <caption class="visually-hidden">{metric} per arm</caption>
        <thead>
          <tr>
            <th scope="col">Arm</th>
            <th scope="col" class="num">n</th>
            <th scope="col" class="num">Mean</th>
            <th scope="col">95% interval</th>
            <th scope="col">Interval</th>
            <th scope="col">Against the control</th>
          </tr>
        </thead>
        <tbody>
          {arms.map((arm) => {
            const result = arm.metrics[metric];
            const low = result?.ci_low ?? null;
            const high = result?.ci_high ?? null;
            const interval = low === null || high === null ? '—' : `${formatMetric(metric, low)} – ${formatMetric(metric, high)}`;
            const versus = result?.vs_control;
            return (
              <tr key={arm.name}>
                <th scope="row">{arm.name}</th>
                <td class="num">{formatCount(result?.n ?? 0)}</td>
                <td class="num">{formatMetric(metric, result?.mean)}</td>
                <td>{interval}</td>
                <td>
                  <IntervalBar low={low} mean={result?.mean ?? null} high={high} scale={scale} label={`${arm.name}: mean ${formatMetric(metric, result?.mean)}, interval ${interval}`} />
                </td>
                <td>
                  {versus === undefined ? (
                    <span class="muted-text">control</span>
                  ) : versus === null ? (
                    <span class="muted-text">not enough data</span>
                  ) : (
                    <>
                      <span class={`verdict-${versus.verdict}`}>{versus.verdict}</span>: {versus.difference >= 0 ? '+' : ''}
                      {formatMetric(metric, versus.difference)}
                      {versus.relative !== null && ` (${versus.relative >= 0 ? '+' : ''}${(versus.relative * 100).toFixed(1)}%)`}
                      <div class="muted-text">
                        {formatMetric(metric, versus.ci_low)} to {formatMetric(metric, versus.ci_high)}
                      </div>
                    </>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

export function DecisionPanel({ decision, computedAt }: { decision: Decision; computedAt: string }) {
  return (
    <div class="panel decision">
      <p>
        <strong>Winner:</strong> {decision.winner ?? 'none yet'}
      </p>
      <p>
        <strong>Why:</strong> {decision.reason}
      </p>
      <p class="muted-text">
        Primary metric {decision.primary_metric} · {formatPercent(decision.confidence, 0)} confidence ({decision.method})
        {decision.units_needed !== null && decision.units_needed > 0 && ` · about ${formatCount(decision.units_needed)} more units per arm needed`} · computed{' '}
        {formatDate(computedAt)}
      </p>
      {decision.guardrail_breaches.length > 0 && (
        <ul>
          {decision.guardrail_breaches.map((breach) => (
            <li key={`${breach.arm}/${breach.metric}`}>
              Guardrail {breach.metric} breached by {breach.arm}: {breach.detail}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

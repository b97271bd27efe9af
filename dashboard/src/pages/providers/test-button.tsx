// "Test <provider>": the provider's model-list call with the gateway's credentials
// (GET /v1/providers/{provider}/test), its outcome announced beside the button.
import { useState } from 'preact/hooks';
import { get } from '../../api.js';
import { formatMs } from '../../components/ui.js';
import type { ProviderTest } from '../../types/analytics.js';

export function TestButton({ provider }: { provider: string }) {
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<{ ok: boolean; text: string } | null>(null);

  return (
    <div class="test">
      <button
        type="button"
        class="secondary"
        disabled={busy}
        onClick={async () => {
          setBusy(true);
          setResult(null);
          try {
            setResult(describe(await get<ProviderTest>(`/v1/providers/${encodeURIComponent(provider)}/test`)));
          } catch (failure) {
            setResult({ ok: false, text: failure instanceof Error ? failure.message : String(failure) });
          } finally {
            setBusy(false);
          }
        }}
      >
        Test {provider}
      </button>
      <span role="status" class={result ? (result.ok ? 'success' : 'test-failed') : undefined}>
        {busy ? 'Testing…' : result?.text}
      </span>
    </div>
  );
}

function describe(test: ProviderTest): { ok: boolean; text: string } {
  if (!test.configured) return { ok: false, text: `Not configured: ${test.message}` };
  const status = test.status === 0 ? 'no answer' : `status ${test.status}`;
  if (test.ok) return { ok: true, text: `OK · ${status} · ${formatMs(test.latency_ms)}` };
  return { ok: false, text: `Failed · ${status} · ${formatMs(test.latency_ms)}${test.error ? ` · ${test.error}` : ''}` };
}

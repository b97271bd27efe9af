// Experiments: the list (#/experiments) or one experiment's results (#/experiments?id=exp_…).
import type { PageProps } from '../app.js';
import { ExperimentDetail } from './experiments/experiment-detail.js';
import { ExperimentsList } from './experiments/experiment-list.js';
import '../components/admin-pages.css';
import './experiments/experiments.css';

export function Experiments({ query }: PageProps) {
  const id = query.get('id');
  return id ? <ExperimentDetail key={id} id={id} /> : <ExperimentsList />;
}

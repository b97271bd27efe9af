// MODELGATE_WORKERS: how many workers `auto` means (cores, capped by a cgroup CPU quota), and which
// settings several workers need.
import t from 'tap';
import { availableParallelism } from 'node:os';
import { planWorkers, sharingProblems, usableCores, type WorkerSettings } from '../../core/worker-count.js';

const shared: WorkerSettings = { MODELGATE_WORKERS: 'auto', MODELGATE_STORE: 'redis', MODELGATE_CACHE_ENABLED: true, MODELGATE_CACHE_TYPE: 'redis', MODELGATE_LOG_ROTATION: true };

t.test('a cgroup CPU quota caps the cores auto counts', async (t) => {
  const cores = availableParallelism();
  t.equal(usableCores(undefined), cores, 'no cgroup v2 file: every core');
  t.equal(usableCores('max 100000\n'), cores, 'no quota');
  t.equal(usableCores('100000 100000\n'), 1, 'one CPU');
  t.equal(usableCores('50000 100000'), 1, 'half a CPU: one worker');
  t.equal(usableCores(`${(cores + 8) * 100000} 100000`), cores, 'a quota above the cores: the cores');
  t.equal(usableCores('garbage'), cores);
});

t.test('auto: one per core with the shared state in Redis, else one, saying why', async (t) => {
  t.same(planWorkers(shared, 4), { count: 4 });
  t.same(planWorkers({ ...shared, MODELGATE_WORKERS: '3' }, 8), { count: 3 });
  const alone = planWorkers({ ...shared, MODELGATE_STORE: 'embedded', MODELGATE_CACHE_TYPE: 'memory' }, 4);
  t.equal(alone.count, 1);
  t.match(alone.reason, /MODELGATE_STORE=redis and MODELGATE_CACHE_TYPE=redis/);
  t.same(sharingProblems({ ...shared, MODELGATE_CACHE_ENABLED: false, MODELGATE_CACHE_TYPE: 'memory' }, 2), [], 'no cache: nothing to share there');
  t.match(sharingProblems({ ...shared, MODELGATE_LOG_FILE: '/tmp/x.log' }, 2)[0], /^MODELGATE_LOG_ROTATION: must be false/);
});

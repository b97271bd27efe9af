// V8 settings the gateway runs with, set by the process itself when this module is evaluated —
// the first import of core/main.ts and demo/main.ts, before any other module's startup code — so
// every way of starting it (npm start, the image, a cluster worker, the demo, the benchmark) runs
// the same heap.
//
// Allocation-site pretenuring off. V8 watches object and array literals whose objects survive a
// young-generation collection and, past a ratio, allocates that literal's later objects directly
// in the old generation. A request's objects survive a collection whenever they are in flight at
// it, so under load V8 pretenures some of the request's own literals — per run, depending on what
// it saw while warming up. A pretenured object that dies stays in the old generation until the next
// full collection, and until then every young object it points to is kept alive too and promoted
// by the next collections: in the benchmark (json, 50 connections; docs/benchmarks.md, seventh
// round), about half of the runs promoted 13–14 KB per request instead of 7–8 and spent ~50% more
// time in scavenges. Without pretenuring, every run stayed at 7.4–8.4 KB.
import v8 from 'node:v8';

v8.setFlagsFromString('--no-allocation-site-pretenuring');

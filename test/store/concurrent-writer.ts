// A second controller for the concurrency test: opens the store (running the migrations), then writes `count` runs
// cloned from the generated PASS fixture, one transaction each: ids `<who>-<i>` and, for i < shared, `shared-<i>`
// (both writers write those: the upsert must keep one row each). Prints how many it wrote.
import { chooseStore, openStore } from '../../src/store/open-store.js';
import { passRecord } from '../fixtures/records/build.js';

const [target, who, countArg, sharedArg] = process.argv.slice(2) as [string, string, string, string];
const store = await openStore(chooseStore({ out: '.', db: target.startsWith('postgres') ? target : `sqlite:${target}` }));
const base = passRecord();
let n = 0;
for (let i = 0; i < Number(countArg); i++) {
  for (const runId of i < Number(sharedArg) ? [`${who}-${i}`, `shared-${i}`] : [`${who}-${i}`]) {
    const serial = `SER-${runId}`;
    await store.runFinished({ ...base, runId, cable: { ...base.cable, serial } }, { runDir: null, controller: who });
    n++;
  }
}
await store.close();
process.stdout.write(`${n}\n`);

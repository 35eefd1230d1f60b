// Property tests are deterministic: one fixed seed unless FC_SEED asks for another (to explore: FC_SEED=$RANDOM npm test).
import fc from 'fast-check';

const seed = Number(process.env['FC_SEED'] ?? 20261201);
fc.configureGlobal({ seed: Number.isInteger(seed) ? seed : 20261201 });

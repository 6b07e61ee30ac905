/**
 * fast-check for the suites, with a fixed seed so that a failure in CI replays exactly here
 * (fast-check prints the seed and the shrunk path with the counterexample). Suites import `fc`
 * from this file, not from fast-check (ESLint enforces it). WAYMARK_FC_SEED=<n> explores
 * another seed; test/sync pins its own seeds per case.
 */
import fc from 'fast-check';

export const FC_SEED = Number(process.env.WAYMARK_FC_SEED) || 20261125;
fc.configureGlobal({ ...fc.readConfigureGlobal(), seed: FC_SEED });

export default fc;

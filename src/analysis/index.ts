// One import for the run orchestrator and the grading.
export { analyzeRun, loadedVsIdle, fecMarginOf, canonicalRail, type AnalysisInput, type AnalysisPhase, type LabelledSample } from './analyze.js';
export { EarlyStopDetector, type EarlyStopDecision, type EarlyStopOptions } from './early-stop.js';
export { counterDelta, intervalDelta, laneRatio, SERIAL_RATE_BPS, FEC_LIMIT_BER, type IntervalDelta } from './counters.js';
export { poissonUpperBound, chiSquareQuantile, gammaQuantile } from './poisson.js';

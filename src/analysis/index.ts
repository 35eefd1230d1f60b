// One import for the run orchestrator and the grading.
export { analyzeRun, gradedPhasesOf, loadedVsIdle, fecMarginOf, canonicalRail, RunAnalyzer, type AnalysisInput, type AnalysisPhase, type LabelledSample } from './analyze.js';
export { EarlyStopDetector, growthText, COUNT_RULES, type CountRule, type EarlyStopDecision, type WatchSettings, type FecWindowSettings, type LaneRatioSettings } from './early-stop.js';
export { counterDelta, intervalDelta, certainLaneRatio, berBounds, decadesBelowFecLimit, SERIAL_RATE_BPS, FEC_LIMIT_BER, type IntervalDelta } from './counters.js';
export { isGrowing, isRunaway, othersGrowth, LaneTempBins, type LaneGrowth } from './lane-temp.js';
export { poissonUpperBound, poissonLowerBound, chiSquareQuantile, gammaQuantile } from './poisson.js';

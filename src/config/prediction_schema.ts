/**
 * The `[prediction]` table: how a plan's effect on the beam is predicted
 * before it is shown (preflight's `predicted_effect`), what refuses it, and
 * how the prediction is held to what the machine does while the plan runs.
 * On the simulator the prediction is the plan run on a copy of the live
 * facility; on EPICS and TANGO it is a linear model from the response files
 * in `response_dir` (docs/prediction.md).
 *
 * @module
 */
import { z } from "zod";

/** Alarm thresholds and noise of the watched devices a pattern matches (`*`, `?`). */
const WatchSchema = z.strictObject({
  lolo: z.number().optional(),
  low: z.number().optional(),
  high: z.number().optional(),
  hihi: z.number().optional(),
  /** One reading's noise (σ), in the device's units: the floor of the deviation check. */
  noise: z.number().positive().optional(),
});

export const PredictionConfigSchema = z.strictObject({
  /** false: no prediction is made, nothing is refused for one, and the table says so. */
  enabled: z.boolean().default(true),
  /** A plan predicted to bring a watched device to this severity (worse than before) is refused. */
  refuse_at: z.enum(["MINOR", "MAJOR", "INVALID"]).default("MAJOR"),
  /**
   * true: a plan whose effect cannot be predicted (no model, a damaged file, a model that fails,
   * a written device no model covers) is refused; false: it is a warning above the question.
   */
  required: z.boolean().default(false),
  /** EPICS and TANGO: the response files (CSV or JSON) the facility measures and refreshes. */
  response_dir: z.string().default(""),
  /** A response file measured longer ago than this is a warning. */
  max_age_days: z.number().positive().max(3650).default(30),
  /** Compare readings with the prediction while a plan runs; a deviation stops it. */
  observe: z.boolean().default(true),
  /** A change that differs from the predicted one by more than this share of it is a deviation… */
  deviation_relative: z.number().min(0).max(10).default(0.25),
  /** …and by more than this many times the noise of the difference of two readings. */
  deviation_sigmas: z.number().min(0).max(1000).default(6),
  /** Seconds of each WAIT and scan dwell the simulator's prediction runs through. */
  wait_horizon_s: z.number().positive().max(3600).default(60),
  /** Longest a prediction may take (real time); longer is "no prediction possible". */
  max_seconds: z.number().positive().max(600).default(20),
  /** Thresholds and noise of watched devices the control system does not give, by pattern. */
  watch: z.record(z.string().min(1).max(256), WatchSchema).default({}),
}).prefault({});

export type PredictionConfig = z.infer<typeof PredictionConfigSchema>;

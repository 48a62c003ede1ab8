/** What every benchmark module returns: one row of the results table. */
export interface FigureResult {
  /** Short name of the figure, e.g. `timeline verification (core, in process)`. */
  figure: string;
  /** The measured value (null when not measured). */
  value: number | null;
  unit: string;
  /** The reference measured side by side in the same run, when the figure has one. */
  reference: { what: string; value: number; unit: string } | null;
  /** value / reference.value (or the quantity the target is stated in), when it applies. */
  ratio: number | null;
  /** The target, as stated in the issue. */
  target: string;
  /** true / false when the target was checked, null when the figure was not measured. */
  met: boolean | null;
  /** What bounds the figure, what was missed and by how much, or why it was not measured. */
  note: string;
  /** Secondary measurements worth printing (sizes, spreads, counts). */
  details?: Record<string, string | number>;
}

/** Options every module receives. */
export interface BenchContext {
  quick: boolean;
  /** Scratch folder in os.tmpdir(), removed at the end. */
  tmp: string;
  /** The repository root. */
  root: string;
  /** Log a progress line (stderr). */
  log(msg: string): void;
  /** Repetitions of the in-process timings (median is reported). */
  reps: number;
  /** PostgreSQL admin URL (127.0.0.1 only). */
  pgAdminUrl: string;
  /** Redis URL (127.0.0.1 only). */
  redisUrl: string;
}

/** A figure that could not be measured: reported, never hidden. */
export function notMeasured(figure: string, unit: string, target: string, reason: string): FigureResult {
  return { figure, value: null, unit, reference: null, ratio: null, target, met: null, note: `not measured: ${reason}` };
}

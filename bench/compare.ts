// Side-by-side timing for the fast-path benchmarks (issue 18): every contender runs in the same
// process, rounds interleaved, so a change in the machine's load falls on all of them alike.

export interface Contender {
  readonly name: string
  /** One operation; awaited, and run `perRound` times in a row. */
  readonly run: () => unknown
}

export interface Comparison {
  /** Each contender's mean time per operation in every round, in milliseconds. */
  readonly rounds: ReadonlyArray<ReadonlyArray<number>>
  readonly min: ReadonlyArray<number>
  readonly median: ReadonlyArray<number>
}

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2
}

/** Runs each contender `perRound` times per round, in turn, for `rounds` rounds after the warm-up rounds (one by default). */
export const compare = async (
  contenders: ReadonlyArray<Contender>,
  {
    rounds = 5,
    perRound = 200,
    warmup = 1,
    between
  }: {
    readonly rounds?: number
    readonly perRound?: number
    /** Untimed rounds first, so that every contender's code is compiled before it is timed. */
    readonly warmup?: number
    /** Untimed, before each contender's batch: e.g. emptying a peer that keeps what it received. */
    readonly between?: () => Promise<void>
  } = {}
): Promise<Comparison> => {
  const times: Array<Array<number>> = contenders.map(() => [])
  for (let round = -warmup; round < rounds; round++) {
    // Alternate the order, so neither side always runs right after the other's garbage.
    const order = contenders.map((_, i) => i)
    if (round % 2 === 1) order.reverse()
    for (const i of order) {
      const contender = contenders[i] as Contender
      if (between !== undefined) await between()
      const start = performance.now()
      for (let n = 0; n < perRound; n++) await contender.run()
      const elapsed = (performance.now() - start) / perRound
      if (round >= 0) times[i]?.push(elapsed)
    }
  }
  return { rounds: times, min: times.map((t) => Math.min(...t)), median: times.map(median) }
}

const ms = (value: number) => (value >= 1 ? value.toFixed(2) : value.toFixed(3))

/**
 * One row per contender: its min and median time per operation, and its ratios to the baseline (the
 * first contender), each checked against its target (at most that many times the baseline). The
 * verdict is taken on the min: on a shared machine the median also carries other processes' load.
 */
export const ratioRows = (
  comparison: Comparison,
  contenders: ReadonlyArray<Contender>,
  targets: ReadonlyArray<number | undefined> = []
): ReadonlyArray<object> =>
  contenders.map((contender, i) => {
    const min = (comparison.min[i] ?? 0) / (comparison.min[0] ?? 1)
    const med = (comparison.median[i] ?? 0) / (comparison.median[0] ?? 1)
    const target = targets[i]
    return {
      name: contender.name,
      "min ms": ms(comparison.min[i] ?? 0),
      "median ms": ms(comparison.median[i] ?? 0),
      "ratio (min / median)": i === 0 ? "baseline" : `${min.toFixed(2)}x / ${med.toFixed(2)}x`,
      target: target === undefined ? "" : `≤ ${target}x: ${min <= target ? "met" : "MISSED"}`
    }
  })

/** A row of one contender's min and median time over another's, both measured in `comparison`. */
export const ratioOf = (comparison: Comparison, i: number, j: number, name: string): object => {
  const ratio = (of: "min" | "median") => `${((comparison[of][i] ?? 0) / (comparison[of][j] ?? 1)).toFixed(2)}x`
  return { name, "ratio (min / median)": `${ratio("min")} / ${ratio("median")}` }
}

export interface Loaded {
  readonly name: string
  /** One round: requests per second over `seconds`. */
  readonly load: (seconds: number) => Promise<number>
}

export interface Throughput {
  /** Each contender's requests per second in every round. */
  readonly rounds: ReadonlyArray<ReadonlyArray<number>>
  readonly max: ReadonlyArray<number>
  readonly median: ReadonlyArray<number>
}

/**
 * Throughput side by side: each contender loaded for `seconds` in turn, the order alternating, for
 * `rounds` rounds after an untimed warm-up round, so that a change in the machine's load falls on all alike.
 */
export const compareThroughput = async (
  contenders: ReadonlyArray<Loaded>,
  {
    rounds = 5,
    seconds = 2,
    warmup = 1
  }: { readonly rounds?: number; readonly seconds?: number; readonly warmup?: number } = {}
): Promise<Throughput> => {
  const rates: Array<Array<number>> = contenders.map(() => [])
  for (let round = -warmup; round < rounds; round++) {
    const order = contenders.map((_, i) => i)
    if (round % 2 === 1) order.reverse()
    for (const i of order) {
      const rate = await (contenders[i] as Loaded).load(round < 0 ? 1 : seconds)
      if (round >= 0) rates[i]?.push(rate)
    }
  }
  return { rounds: rates, max: rates.map((r) => Math.max(...r)), median: rates.map(median) }
}

/**
 * One row per contender: its best and median requests per second and their ratios to the baseline
 * (the first contender), each checked against its target (at least that share of the baseline). The
 * verdict is taken on the best rounds, the ones least slowed by other processes, as `ratioRows` takes
 * it on the fastest times.
 */
export const throughputRows = (
  comparison: Throughput,
  contenders: ReadonlyArray<{ readonly name: string }>,
  targets: ReadonlyArray<number | undefined> = []
): ReadonlyArray<object> =>
  contenders.map((contender, i) => {
    const best = (comparison.max[i] ?? 0) / (comparison.max[0] ?? 1)
    const med = (comparison.median[i] ?? 0) / (comparison.median[0] ?? 1)
    const target = targets[i]
    return {
      name: contender.name,
      "best req/s": Math.round(comparison.max[i] ?? 0),
      "median req/s": Math.round(comparison.median[i] ?? 0),
      "ratio (best / median)": i === 0 ? "baseline" : `${best.toFixed(2)}x / ${med.toFixed(2)}x`,
      target: target === undefined ? "" : `≥ ${target}x: ${best >= target ? "met" : "MISSED"}`
    }
  })

.pragma library

// Round ticks for a chart's value axis that starts at zero: a top and a step of 1, 2 or 5 × 10^k
// and as many decimals as the step needs, so that no two labels read the same ("0, 1, 1, 2, 2"
// was what a step of 0.5 printed with no decimals).

// The smallest of 1, 2, 5 × 10^k that is at least x.
function niceStep(x) {
    const p = Math.pow(10, Math.floor(Math.log10(Math.max(x, 1e-9))))
    for (const m of [1, 2, 5, 10]) {
        if (m * p >= x * (1 - 1e-9))
            return m * p
    }
    return 10 * p
}

// {max, step, decimals, tickCount, labelFormat} for values up to `peak` over `intervals` steps
// (10 % headroom); `minStep` is the finest step worth showing (1 for whole counts such as req/s).
function scale(peak, intervals, minStep) {
    const step = niceStep(Math.max(Math.max(peak, 0) * 1.1 / intervals, minStep))
    const decimals = Math.max(0, -Math.floor(Math.log10(step) + 1e-9))
    return { max: step * intervals, step: step, decimals: decimals, tickCount: intervals + 1,
             labelFormat: "%." + decimals + "f" }
}

// The labels an axis from `min` to `max` with `tickCount` ticks prints with `decimals` decimals.
function labels(min, max, tickCount, decimals) {
    const out = []
    for (let i = 0; i < tickCount; ++i)
        out.push((min + (max - min) * i / (tickCount - 1)).toFixed(decimals))
    return out
}

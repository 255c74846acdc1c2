/// Origins that the document format leaves out because they can be recomputed.
///
/// In history without concurrency, an item's left origin is the nearest item to its
/// left (in document order, tombstones included) with a smaller counter, and its right
/// origin the nearest such item to its right: everything between was inserted later, so
/// has larger counters. Saved spans flag only origins that break this rule.
enum OriginInference {
    /// For each span, the inferred left origin of its first item.
    static func left(counters: [Int], lengths: [Int], actors: [Int32]) -> [OpID] {
        var out = [OpID](repeating: .none, count: counters.count)
        var stack: [Int] = []
        for i in counters.indices {
            let c = counters[i]
            while let t = stack.last, counters[t] >= c { stack.removeLast() }
            if let t = stack.last {
                out[i] = OpID(counter: min(counters[t] + lengths[t] - 1, c - 1), actor: actors[t])
            }
            stack.append(i)
        }
        return out
    }

    /// For each span, the inferred right origin (shared by its items).
    static func right(counters: [Int], actors: [Int32]) -> [OpID] {
        var out = [OpID](repeating: .none, count: counters.count)
        var stack: [Int] = []
        for i in counters.indices.reversed() {
            let c = counters[i]
            while let t = stack.last, counters[t] >= c { stack.removeLast() }
            if let t = stack.last { out[i] = OpID(counter: counters[t], actor: actors[t]) }
            stack.append(i)
        }
        return out
    }
}

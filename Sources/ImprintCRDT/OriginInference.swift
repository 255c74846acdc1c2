/// Origins that the document format leaves out because they can be recomputed.
///
/// In history without concurrency, an item's left origin is the nearest item to its
/// left (in document order, tombstones included) with a smaller counter, and its right
/// origin the nearest such item to its right: everything between was inserted later, so
/// has larger counters. Saved spans flag only origins that break this rule.
enum OriginInference {
    /// For each span, the inferred left origin of its first item (a "previous smaller
    /// element" pass with a stack).
    static func left(counters: [Int], lengths: [Int], actors: [Int32]) -> [OpID] {
        let n = counters.count
        return [OpID](unsafeUninitializedCapacity: n) { out, initialized in
            counters.withUnsafeBufferPointer { c in
                let stack = UnsafeMutablePointer<Int>.allocate(capacity: max(n, 1))
                defer { stack.deallocate() }
                var top = 0
                for i in 0..<n {
                    let ci = c[i]
                    while top > 0 && c[stack[top - 1]] >= ci { top -= 1 }
                    if top > 0 {
                        let t = stack[top - 1]
                        (out.baseAddress! + i).initialize(to: OpID(counter: min(ci - 1, c[t] + lengths[t] - 1), actor: actors[t]))
                    } else {
                        (out.baseAddress! + i).initialize(to: .none)
                    }
                    stack[top] = i
                    top += 1
                }
            }
            initialized = n
        }
    }

    /// For each span, the inferred right origin (shared by its items): the first item of
    /// the nearest span to the right whose first counter is smaller.
    static func right(counters: [Int], actors: [Int32]) -> [OpID] {
        let n = counters.count
        return [OpID](unsafeUninitializedCapacity: n) { out, initialized in
            counters.withUnsafeBufferPointer { c in
                let stack = UnsafeMutablePointer<Int>.allocate(capacity: max(n, 1))
                defer { stack.deallocate() }
                var top = 0
                var i = n - 1
                while i >= 0 {
                    let ci = c[i]
                    while top > 0 && c[stack[top - 1]] >= ci { top -= 1 }
                    if top > 0 {
                        let t = stack[top - 1]
                        (out.baseAddress! + i).initialize(to: OpID(counter: c[t], actor: actors[t]))
                    } else {
                        (out.baseAddress! + i).initialize(to: .none)
                    }
                    stack[top] = i
                    top += 1
                    i -= 1
                }
            }
            initialized = n
        }
    }
}

/// A minimal edit script between two texts, counted in Unicode code points (the engine's
/// text positions), as splices ready to apply to the old text.
///
/// Myers' O(ND) algorithm on code points after trimming the common prefix and suffix. When
/// the texts differ in more than `maxEditDistance` places the search stops and the middle is
/// replaced with one splice (still correct, no longer minimal), so memory stays bounded.
public struct TextDiff: Sendable, Equatable {
    /// One replacement in the old text's coordinates.
    public struct Splice: Sendable, Equatable {
        /// Code-point offset in the old text.
        public var position: Int
        /// Code points of the old text removed at `position`.
        public var deleteCount: Int
        /// Text inserted at `position`.
        public var insert: String
    }

    /// Splices in increasing `position` order, non-overlapping. Apply them last to first so
    /// earlier positions stay valid.
    public var splices: [Splice]

    /// Default bound on the edit distance searched exactly.
    public static let defaultMaxEditDistance = 1024

    /// Computes the diff from `old` to `new`.
    public init(from old: String, to new: String, maxEditDistance: Int = defaultMaxEditDistance) {
        let a = Array(old.unicodeScalars)
        let b = Array(new.unicodeScalars)
        var prefix = 0
        while prefix < a.count, prefix < b.count, a[prefix] == b[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < a.count - prefix, suffix < b.count - prefix,
              a[a.count - 1 - suffix] == b[b.count - 1 - suffix] { suffix += 1 }
        let midA = Array(a[prefix..<(a.count - suffix)])
        let midB = Array(b[prefix..<(b.count - suffix)])
        if midA.isEmpty && midB.isEmpty {
            splices = []
            return
        }
        if let script = TextDiff.myers(midA, midB, maxD: maxEditDistance) {
            splices = TextDiff.splices(from: script, a: midA, b: midB, offset: prefix)
        } else {
            splices = [Splice(position: prefix, deleteCount: midA.count, insert: TextDiff.string(midB[...]))]
        }
    }

    /// The result of applying the splices to `old` (for checking).
    public func applied(to old: String) -> String {
        var scalars = Array(old.unicodeScalars)
        for s in splices.reversed() {
            scalars.replaceSubrange(s.position..<(s.position + s.deleteCount), with: Array(s.insert.unicodeScalars))
        }
        var out = String.UnicodeScalarView()
        out.append(contentsOf: scalars)
        return String(out)
    }

    private enum Step { case keep, delete, insert }

    /// Myers' greedy forward search with the V array saved per d, then a backtrack.
    private static func myers(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar], maxD: Int) -> [Step]? {
        let n = a.count, m = b.count
        let maxSteps = min(n + m, maxD)
        let offset = maxSteps + 1
        var v = [Int](repeating: 0, count: 2 * maxSteps + 3)
        var trace: [[Int]] = []
        var found = false
        outer: for d in 0...maxSteps {
            trace.append(v)
            var k = -d
            while k <= d {
                var x: Int
                if k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1]) {
                    x = v[offset + k + 1]
                } else {
                    x = v[offset + k - 1] + 1
                }
                var y = x - k
                while x < n, y < m, a[x] == b[y] { x += 1; y += 1 }
                v[offset + k] = x
                if x >= n && y >= m { found = true; break outer }
                k += 2
            }
        }
        guard found else { return nil }
        // Backtrack from (n, m) through the saved V arrays.
        var steps: [Step] = []
        var x = n, y = m
        for d in stride(from: trace.count - 1, through: 0, by: -1) {
            let vd = trace[d]
            let k = x - y
            let prevK: Int
            if k == -d || (k != d && vd[offset + k - 1] < vd[offset + k + 1]) {
                prevK = k + 1
            } else {
                prevK = k - 1
            }
            let prevX = d == 0 ? 0 : vd[offset + prevK]
            let prevY = prevX - prevK
            while x > prevX && y > prevY { steps.append(.keep); x -= 1; y -= 1 }
            if d > 0 {
                if x == prevX { steps.append(.insert); y -= 1 } else { steps.append(.delete); x -= 1 }
            }
        }
        return steps.reversed()
    }

    private static func splices(from script: [Step], a: [Unicode.Scalar], b: [Unicode.Scalar], offset: Int) -> [Splice] {
        var result: [Splice] = []
        var i = 0, j = 0
        var index = 0
        while index < script.count {
            if case .keep = script[index] { i += 1; j += 1; index += 1; continue }
            let start = i, insertStart = j
            while index < script.count {
                switch script[index] {
                case .keep: break
                case .delete: i += 1; index += 1; continue
                case .insert: j += 1; index += 1; continue
                }
                break
            }
            result.append(Splice(position: offset + start, deleteCount: i - start, insert: string(b[insertStart..<j])))
        }
        return result
    }

    private static func string(_ scalars: ArraySlice<Unicode.Scalar>) -> String {
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars)
        return String(view)
    }
}

import Foundation

enum Clock {
    static func measure<T>(_ body: () throws -> T) rethrows -> (Double, T) {
        let start = DispatchTime.now().uptimeNanoseconds
        let r = try body()
        let end = DispatchTime.now().uptimeNanoseconds
        return (Double(end - start) / 1_000_000, r)
    }

    static func median(_ xs: [Double]) -> Double {
        let s = xs.sorted()
        guard !s.isEmpty else { return 0 }
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    /// The value below which a fraction `p` of `xs` lies (nearest rank); 0 when empty.
    static func percentile(_ xs: [Double], _ p: Double) -> Double {
        let s = xs.sorted()
        return s.isEmpty ? 0 : s[min(s.count - 1, Int(Double(s.count) * p))]
    }

    static func format(_ x: Double) -> String { String(format: "%.3f", x) }

    /// Peak resident set size of this process (VmHWM), in MB.
    static func peakRSSMegabytes() -> Double {
        guard let s = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in s.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let kb = line.split(separator: " ").compactMap { Double($0) }.first ?? 0
            return kb / 1024
        }
        return 0
    }
}

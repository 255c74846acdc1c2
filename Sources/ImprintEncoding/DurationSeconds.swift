/// A `Duration` as a floating-point count of seconds or milliseconds, for timeouts handed to
/// Foundation, log lines and benchmark figures. One conversion for the whole package.
///
/// ```swift
/// let cutoff = now.addingTimeInterval(-window.inSeconds)
/// print("took \(elapsed.inMilliseconds) ms")
/// ```
extension Duration {
    /// Seconds, with the sub-second part (attoseconds) as the fraction.
    package var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// Milliseconds, with the sub-millisecond part as the fraction.
    package var inMilliseconds: Double {
        Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15
    }
}

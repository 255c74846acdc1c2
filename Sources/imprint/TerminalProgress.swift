#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Progress for long commands: one status line on stderr, rewritten in place, shown only
/// when stderr is a terminal and the command is not printing JSON (scripts see nothing).
struct TerminalProgress {
    let enabled: Bool
    private let started = TerminalProgress.now()

    init(json: Bool) {
        enabled = !json && isatty(2) != 0
    }

    /// Shows what the command is doing now, with the time so far.
    func step(_ what: String) {
        guard enabled else { return }
        let seconds = Double(TerminalProgress.now() - started) / 1e9
        let line = "\r\u{1B}[K\(what) (\(String(Int(seconds * 10) / 10)).\(Int(seconds * 10) % 10)s)"
        TerminalProgress.writeToStderr(line)
    }

    /// Clears the status line before the command prints its result.
    func finish() {
        guard enabled else { return }
        TerminalProgress.writeToStderr("\r\u{1B}[K")
    }

    private static func writeToStderr(_ text: String) {
        var bytes = Array(text.utf8)
        _ = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
    }

    private static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}

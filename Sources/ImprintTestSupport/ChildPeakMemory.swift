#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Runs a program to its end and reports its own peak resident set size, from `wait4`'s
/// resource usage of that one child. Unlike the test process's `getrusage(RUSAGE_SELF)`, or
/// `RUSAGE_CHILDREN` (every child ever reaped), other tests running in parallel cannot move
/// the figure: a memory bound checked this way holds or fails on its own.
///
/// ```swift
/// let run = try ChildPeakMemory.run("/path/to/imprint", ["asset", "add", "b.imprint", "big.bin"], in: dir)
/// #expect(run.status == 0 && run.peakResidentBytes < 64 << 20)
/// ```
public enum ChildPeakMemory {
    public struct Outcome: Sendable {
        /// The exit status (128 + n when killed by signal n).
        public var status: Int32
        public var peakResidentBytes: Int
    }

    /// Runs `executable` with `arguments` in `directory` with `environment` added to this
    /// process's, its output discarded.
    public static func run(_ executable: String, _ arguments: [String], in directory: String,
                           environment: [String: String] = [:]) throws -> Outcome {
        var merged = ProcessInfo.processInfo.environment
        for (key, value) in environment { merged[key] = value }
        // `cd` then `exec`, so the child measured is the program itself, not a shell.
        let argv = ["/bin/sh", "-c", "cd \"$0\" && exec \"$@\" >/dev/null 2>&1", directory, executable] + arguments
        let envp = merged.map { "\($0.key)=\($0.value)" }
        var pid: pid_t = 0
        let spawned = withCStrings(argv) { cArgv in
            withCStrings(envp) { cEnvp in posix_spawn(&pid, "/bin/sh", nil, nil, cArgv, cEnvp) }
        }
        guard spawned == 0 else { throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EIO) }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 {
            guard errno == EINTR else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        }
        let exited = status & 0x7F == 0
        let code = exited ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        #if os(Linux)
        let peak = Int(usage.ru_maxrss) * 1024  // kilobytes on Linux
        #else
        let peak = Int(usage.ru_maxrss)  // bytes on macOS
        #endif
        return Outcome(status: code, peakResidentBytes: peak)
    }

    private static func withCStrings<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
        var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
        pointers.append(nil)
        defer { for pointer in pointers { free(pointer) } }
        return body(pointers)
    }
}

import Foundation

/// Child processes run and waited for without holding a thread of Swift's cooperative pool.
///
/// Every test of a run shares that pool, and so do the servers the tests start in-process.
/// It has one thread per core: two on a CI machine. A test that sits in `waitUntilExit()`,
/// in a pipe read or in `Thread.sleep` keeps a thread from all of them for as long as it
/// waits, and two such tests at once stall every server of the run (a Delivery Service
/// request of another test timed out after 30 seconds this way). Here the waiting happens on
/// threads of their own:
///
/// ```swift
/// let output = try await ChildProcess.run(imprint, ["text", "essay.imprint"])
/// #expect(output.status == 0, "\(output.stderrText)")
/// ```
public enum ChildProcess {
    /// What a child printed, and how it ended.
    public struct Output: Sendable {
        /// The exit status, or the signal that ended the child.
        public var status: Int32
        /// Whether the child exited (`.exit`) or was ended by a signal (`.uncaughtSignal`).
        public var reason: Process.TerminationReason
        public var stdout: Data
        public var stderr: Data
        public var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
        public var stderrText: String { String(decoding: stderr, as: UTF8.self) }
    }

    /// Runs `executable` to its end and returns what it printed. Output goes through
    /// temporary files, not pipes, so a child that prints much never waits for a reader.
    ///
    /// - Parameters:
    ///   - environment: merged over this process's environment.
    ///   - directory: the child's working directory; this process's when nil.
    ///   - input: the child's standard input; none (end of file at once) when nil.
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
                           directory: String? = nil, input: Data? = nil) async throws -> Output {
        let base = NSTemporaryDirectory() + "imprint-child-\(UUID().uuidString)"
        let paths = (input: base + ".in", stdout: base + ".out", stderr: base + ".err")
        defer { for path in [paths.input, paths.stdout, paths.stderr] { try? FileManager.default.removeItem(atPath: path) } }
        guard FileManager.default.createFile(atPath: paths.input, contents: input ?? Data()),
              FileManager.default.createFile(atPath: paths.stdout, contents: nil),
              FileManager.default.createFile(atPath: paths.stderr, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: base])
        }
        let handles = (input: try FileHandle(forReadingFrom: URL(fileURLWithPath: paths.input)),
                       stdout: try FileHandle(forWritingTo: URL(fileURLWithPath: paths.stdout)),
                       stderr: try FileHandle(forWritingTo: URL(fileURLWithPath: paths.stderr)))
        defer { for handle in [handles.input, handles.stdout, handles.stderr] { try? handle.close() } }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardInput = handles.input
        process.standardOutput = handles.stdout
        process.standardError = handles.stderr
        try await start(process).value
        return Output(status: process.terminationStatus, reason: process.terminationReason,
                      stdout: FileManager.default.contents(atPath: paths.stdout) ?? Data(),
                      stderr: FileManager.default.contents(atPath: paths.stderr) ?? Data())
    }

    /// Starts `process` (configured, not yet running); the task returned ends when it exits.
    /// Replaces the process's `terminationHandler`.
    public static func start(_ process: Process) throws -> Task<Void, Never> {
        let (ended, signal) = AsyncStream.makeStream(of: Void.self)
        process.terminationHandler = { _ in signal.finish() }
        do { try process.run() } catch {
            process.terminationHandler = nil
            throw error
        }
        return Task { for await _ in ended {} }
    }
}

/// Runs `body` on a thread of its own and returns its result: for the blocking waits an
/// async test cannot avoid (a pipe read, a semaphore, a library's synchronous wait), so the
/// cooperative pool keeps its threads (see ``ChildProcess``).
public func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}

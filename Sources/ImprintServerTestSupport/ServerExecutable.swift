import Foundation

/// The built `imprint-server` binary, for tests that run it as a child process.
public enum ServerExecutable {
    public static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// Next to the test bundle's executable, else `.build/debug`.
    public static func binary() throws -> URL {
        var candidates: [URL] = []
        if let executable = Bundle.main.executableURL {
            candidates.append(executable.deletingLastPathComponent().appendingPathComponent("imprint-server"))
        }
        candidates.append(repositoryRoot.appendingPathComponent(".build/debug/imprint-server"))
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw MissingBinary(searched: candidates.map(\.path))
        }
        return found
    }

    public struct MissingBinary: Error {
        public var searched: [String]
        public init(searched: [String]) { self.searched = searched }
    }

    /// Starts the binary with `arguments`, its stderr collected in the returned `Output`.
    public static func launch(_ arguments: [String]) throws -> (process: Process, stderr: Output) {
        let process = Process()
        process.executableURL = try binary()
        process.arguments = arguments
        let stderr = Pipe()
        process.standardError = stderr
        process.standardOutput = FileHandle.nullDevice
        let output = Output()
        stderr.fileHandleForReading.readabilityHandler = { output.append($0.availableData) }
        try process.run()
        return (process, output)
    }

    /// Starts the binary with `arguments` (which should include `--port 0`) and waits until it
    /// logs the port it listens on; throws, with what it printed, if it exits or stays silent.
    public static func launchListening(_ arguments: [String], attempts: Int = 600) async throws -> (process: Process, port: Int, stderr: Output) {
        let (process, output) = try launch(arguments)
        for _ in 0..<attempts {
            if let match = output.value.firstMatch(of: /port=(\d+)/), let port = Int(match.1) { return (process, port, output) }
            if !process.isRunning { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        if process.isRunning { process.terminate() }
        throw NotListening(output: output.value)
    }

    public struct NotListening: Error, CustomStringConvertible {
        public var output: String
        public var description: String { "imprint-server did not log a listening port: \(output)" }
    }

    /// Text a child process writes, collected as it arrives.
    public final class Output: @unchecked Sendable {
        private let lock = NSLock()
        private var text = ""
        public init() {}
        public func append(_ data: Data) { lock.withLock { text += String(decoding: data, as: UTF8.self) } }
        public var value: String { lock.withLock { text } }
    }
}

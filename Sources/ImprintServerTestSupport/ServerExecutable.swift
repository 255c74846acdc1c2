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

    /// Text a child process writes, collected as it arrives.
    public final class Output: @unchecked Sendable {
        private let lock = NSLock()
        private var text = ""
        public init() {}
        public func append(_ data: Data) { lock.withLock { text += String(decoding: data, as: UTF8.self) } }
        public var value: String { lock.withLock { text } }
    }
}

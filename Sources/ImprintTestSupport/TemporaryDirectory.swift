#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A fresh directory under the system temp dir, removed when the value is deinitialised.
public final class TemporaryDirectory: Sendable {
    /// The directory's absolute path.
    public let path: String

    /// Creates `<temp>/imprint-<label>-XXXXXX`; traps if the directory cannot be made.
    public init(_ label: String = "test") {
        var template = Array("\(NSTemporaryDirectory())/imprint-\(label)-XXXXXX".utf8CString)
        let result = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(result != nil, "mkdtemp failed")
        path = String(cString: result!).replacingOccurrences(of: "//", with: "/")
    }

    /// The path of `name` inside the directory.
    public func file(_ name: String) -> String { path + "/" + name }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}

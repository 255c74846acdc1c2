import Foundation
import ImprintBundle
import ImprintCRDT

/// The one error type thrown by ImprintStore: a failure of the bundle layer, of the engine,
/// or of the document's shape (docs/document-schema.md).
///
/// `isHostileOrCorrupt` tells a caller (the CLI: exit status 2) that the data is at fault,
/// not the caller or the environment.
public enum StoreError: Error, Sendable, CustomStringConvertible {
    /// The bundle layer failed (I/O, locks, corrupt files, archives).
    case bundle(BundleError)
    /// The engine rejected bytes or a request.
    case engine(CRDTError)
    /// The bundle holds data that cannot be trusted: an undecodable change, a corrupt log or
    /// snapshot, a document without the schema's body text.
    case corrupt(String, path: String?)
    /// The bundle does not hold a whole document yet: its creating change (with the body) has
    /// not arrived from the creator's machine. Retry when more files arrive.
    case incomplete(String)
    /// The caller asked for something impossible (a position past the end, an unknown key).
    case invalidRequest(String)

    /// Wraps any error thrown below this layer.
    static func wrap(_ error: any Error) -> StoreError {
        switch error {
        case let e as StoreError: return e
        case let e as BundleError where e.code == .incomplete:
            return .incomplete(e.message + (e.path.map { " (\($0))" } ?? ""))
        case let e as BundleError: return .bundle(e)
        case let e as FileError: return .bundle(BundleError(e))
        case let e as CRDTError: return .engine(e)
        default: return .invalidRequest(String(describing: error))
        }
    }

    /// Runs `body`, converting lower-layer errors into `StoreError`.
    static func wrapping<T>(_ body: () throws -> T) throws(StoreError) -> T {
        do { return try body() } catch { throw wrap(error) }
    }

    /// The same error with every mention of `path` replaced by `replacement` (an error about
    /// an unpacked staging folder, reported under the archive's name).
    func replacingPath(_ path: String, with replacement: String) -> StoreError {
        func fix(_ text: String) -> String { text.replacingOccurrences(of: path, with: replacement) }
        switch self {
        case .bundle(var e):
            e.message = fix(e.message)
            e.path = e.path.map(fix)
            return .bundle(e)
        case .engine: return self
        case .corrupt(let message, let p): return .corrupt(fix(message), path: p.map(fix))
        case .incomplete(let message): return .incomplete(fix(message))
        case .invalidRequest(let message): return .invalidRequest(fix(message))
        }
    }

    /// True when the data (not the caller) is at fault.
    public var isHostileOrCorrupt: Bool {
        switch self {
        case .bundle(let e): return e.isHostileOrCorrupt
        case .engine(let e):
            return [.notImprintData, .unsupportedVersion, .truncated, .checksumMismatch, .malformed,
                    .tooLarge, .compression, .duplicateSequence].contains(e.code)
        case .corrupt: return true
        case .incomplete, .invalidRequest: return false
        }
    }

    public var description: String {
        switch self {
        case .bundle(let e): return e.description
        case .engine(let e): return "document: \(e)"
        case .corrupt(let message, let path): return "corrupt: \(message)" + (path.map { " (\($0))" } ?? "")
        case .incomplete(let message): return "incomplete: \(message)"
        case .invalidRequest(let message): return message
        }
    }
}

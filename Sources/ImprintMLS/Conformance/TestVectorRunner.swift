import Foundation
import ImprintEncoding

/// Runner for the official RFC 9420 test-vector files
/// (github.com/mlswg/mls-implementations, `test-vectors/`).
///
/// The vector kind is chosen from the file name. Records for cipher suites
/// other than 1–3 are counted as skipped; nothing else is.
public enum MLSTestVectors {
    /// The outcome of running one file.
    public struct Report: Sendable, Hashable {
        /// File name without `.json`.
        public let name: String
        /// False when this vector kind is not implemented yet (counts are then zero).
        public let implemented: Bool
        public let passed: Int
        public let failed: Int
        public let skipped: Int
        /// Up to a few failure descriptions, for diagnostics.
        public let failures: [String]

        /// The contract's one-line summary.
        public var line: String {
            implemented ? "\(name): \(passed) passed, \(failed) failed, \(skipped) skipped" : "\(name): not implemented"
        }

        /// True when the file is implemented and nothing failed.
        public var ok: Bool { implemented && failed == 0 }
    }

    /// Vector kinds (file names without `.json`) this build can check.
    public static var implementedKinds: [String] { runners.keys.sorted() }

    static let runners: [String: @Sendable (VectorRecord) throws -> Outcome] = [
        "tree-math": runTreeMath,
        "deserialization": runDeserialization,
        "crypto-basics": runCryptoBasics,
        "messages": runMessages,
        "passive-client-welcome": runPassiveClientWelcome,
        "passive-client-handling-commit": runPassiveClientHandlingCommit,
        // Same format as handling-commit (held out of ../shared; see docs/mls.md).
        "passive-client-random": runPassiveClientHandlingCommit,
        "treekem": runTreeKEM,
        "tree-validation": runTreeValidation,
        "tree-operations": runTreeOperations,
        "welcome": runWelcome,
        "message-protection": runMessageProtection,
        "secret-tree": runSecretTree,
        "key-schedule": runKeySchedule,
        "psk_secret": runPSKSecret,
        "transcript-hashes": runTranscriptHashes,
    ]

    /// Runs the vector file at `path`.
    public static func run(path: String) -> Report {
        let url = URL(fileURLWithPath: path)
        let name = url.deletingPathExtension().lastPathComponent
        guard let runner = runners[name] else {
            return Report(name: name, implemented: false, passed: 0, failed: 0, skipped: 0, failures: [])
        }
        let records: [Any]
        do {
            let data = try Data(contentsOf: url)
            guard let arr = try JSONSerialization.jsonObject(with: data) as? [Any] else {
                return Report(name: name, implemented: true, passed: 0, failed: 1, skipped: 0, failures: ["top level is not an array"])
            }
            records = arr
        } catch {
            return Report(name: name, implemented: true, passed: 0, failed: 1, skipped: 0, failures: ["cannot read: \(error)"])
        }
        var passed = 0, failed = 0, skipped = 0
        var failures: [String] = []
        for (i, raw) in records.enumerated() {
            do {
                guard let obj = raw as? [String: Any] else { throw VectorFailure("record is not an object") }
                let rec = VectorRecord(obj)
                if let cs = rec.optionalInt("cipher_suite"), !CipherSuite(rawValue: UInt16(clamping: cs)).isSupported {
                    skipped += 1
                    continue
                }
                switch try runner(rec) {
                case .passed: passed += 1
                case .skipped: skipped += 1
                }
            } catch {
                failed += 1
                if failures.count < 10 { failures.append("record \(i): \(error)") }
            }
        }
        return Report(name: name, implemented: true, passed: passed, failed: failed, skipped: skipped, failures: failures)
    }
}

enum Outcome { case passed, skipped }

struct VectorFailure: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

/// Typed access to one JSON record.
struct VectorRecord {
    let obj: [String: Any]
    init(_ obj: [String: Any]) { self.obj = obj }

    func value(_ key: String) throws -> Any {
        guard let v = obj[key] else { throw VectorFailure("missing field \(key)") }
        return v
    }
    func int(_ key: String) throws -> Int {
        guard let n = try value(key) as? NSNumber else { throw VectorFailure("field \(key) is not a number") }
        return n.intValue
    }
    func uint64(_ key: String) throws -> UInt64 {
        guard let n = try value(key) as? NSNumber else { throw VectorFailure("field \(key) is not a number") }
        return n.uint64Value
    }
    func optionalInt(_ key: String) -> Int? { (obj[key] as? NSNumber)?.intValue }
    func string(_ key: String) throws -> String {
        guard let s = try value(key) as? String else { throw VectorFailure("field \(key) is not a string") }
        return s
    }
    func bytes(_ key: String) throws -> [UInt8] { try hexDecode(try string(key), field: key) }
    func optionalBytes(_ key: String) throws -> [UInt8]? {
        if obj[key] == nil || obj[key] is NSNull { return nil }
        return try bytes(key)
    }
    func record(_ key: String) throws -> VectorRecord {
        guard let o = try value(key) as? [String: Any] else { throw VectorFailure("field \(key) is not an object") }
        return VectorRecord(o)
    }
    func array(_ key: String) throws -> [Any] {
        guard let a = try value(key) as? [Any] else { throw VectorFailure("field \(key) is not an array") }
        return a
    }
    func records(_ key: String) throws -> [VectorRecord] {
        try array(key).map {
            guard let o = $0 as? [String: Any] else { throw VectorFailure("\(key) element is not an object") }
            return VectorRecord(o)
        }
    }
    var suite: CipherSuite {
        get throws { CipherSuite(rawValue: UInt16(clamping: try int("cipher_suite"))) }
    }
}

func hexDecode(_ s: String, field: String = "") throws -> [UInt8] {
    guard s.utf8.count % 2 == 0 else { throw VectorFailure("odd-length hex in \(field)") }
    guard let bytes = Hex.decode(s) else { throw VectorFailure("bad hex in \(field)") }
    return bytes
}

func hexEncode(_ b: [UInt8]) -> String { Hex.encode(b) }

/// Throws a failure unless `actual == expected`.
func expectEqual<T: Equatable>(_ actual: T, _ expected: T, _ what: String) throws {
    guard actual == expected else {
        if let a = actual as? [UInt8], let e = expected as? [UInt8] {
            throw VectorFailure("\(what): got \(hexEncode(a).prefix(80)), expected \(hexEncode(e).prefix(80))")
        }
        throw VectorFailure("\(what): got \(actual), expected \(expected)")
    }
}

func expectTrue(_ cond: Bool, _ what: String) throws {
    guard cond else { throw VectorFailure(what) }
}

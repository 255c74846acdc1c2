import ArgumentParser
import Foundation
import ImprintBundle
import ImprintCRDT

/// `--device` (or `IMPRINT_DEVICE`): the device identity used for writing, so several
/// machines can be simulated on one host. Defaults to the host name, made a valid device id.
struct DeviceOptions: ParsableArguments {
    @Option(name: .long, help: "Device id used for writing (default: $IMPRINT_DEVICE, else the host name).")
    var device: String?

    /// The resolved device id, for commands that write: an invalid `--device` or
    /// `IMPRINT_DEVICE` is an error.
    func resolve() throws -> DeviceID {
        if let device { return try DeviceID(device) }
        if let env = ProcessInfo.processInfo.environment["IMPRINT_DEVICE"], !env.isEmpty {
            return try DeviceID(env)
        }
        return Self.hostDevice()
    }

    /// The device id for commands that only read (`text`, `show`, `log`, `asset list|get`):
    /// the given one when valid, else the host's, since a reader writes nothing under it.
    func resolveForReading() -> DeviceID {
        (try? resolve()) ?? Self.hostDevice()
    }

    /// The host name, made a valid device id.
    static func hostDevice() -> DeviceID {
        let host = ProcessInfo.processInfo.hostName.lowercased()
        let cleaned = String(host.map { ($0.isASCII && ($0.isLetter || $0.isNumber)) || $0 == "-" || $0 == "_" ? $0 : "-" }
            .drop { !($0.isLetter || $0.isNumber) }.prefix(64))
        if let id = try? DeviceID(cleaned) { return id }
        return try! DeviceID("local")
    }
}

/// Writes `text` to stdout exactly (no added newline).
func writeOut(_ text: String) {
    FileHandle.standardOutput.write(Data(text.utf8))
}

/// JSON output: `--json` prints exactly one object, serialised compactly with sorted keys.
typealias JSON = JSONValue

/// Prints one JSON object (and a newline) on stdout.
func printJSON(_ fields: [String: JSON]) {
    print(JSON.object(fields).serialized)
}

extension JSON {
    /// A string or null.
    static func optional(_ s: String?) -> JSON { s.map(JSON.string) ?? .null }
    /// An integer.
    static func int<I: BinaryInteger>(_ i: I) -> JSON { .number(Double(i)) }
}

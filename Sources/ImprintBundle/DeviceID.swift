/// The identity of one writing device, used as a file name (`changes/<device>.log`).
///
/// 1 to 64 characters of `a-z`, `0-9`, `-`, `_`, starting with a letter or digit. Lowercase
/// only, so a name with an uppercase OneDrive-style machine suffix (`laptop-DESKTOP-7Q2.log`)
/// can never be a canonical log, and so case-insensitive file systems cannot fold two ids
/// into one file. Ids that would themselves read as a conflict copy are refused.
public struct DeviceID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public init(_ rawValue: String) throws {
        let utf8 = Array(rawValue.utf8)
        guard (1...64).contains(utf8.count) else {
            throw BundleError(.invalidDeviceID, "device id must be 1 to 64 characters, got \(utf8.count)")
        }
        func allowed(_ c: UInt8) -> Bool {
            (97...122).contains(c) || (48...57).contains(c) || c == 45 || c == 95
        }
        guard utf8.allSatisfy(allowed), utf8[0] != 45, utf8[0] != 95 else {
            throw BundleError(.invalidDeviceID, "device id \"\(rawValue)\" may use only a-z, 0-9, '-', '_' and must start with a letter or digit")
        }
        guard ConflictCopyName.parse(rawValue + ".log") == nil else {
            throw BundleError(.invalidDeviceID, "device id \"\(rawValue)\" reads as a sync tool's conflict-copy name")
        }
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    public static func < (lhs: DeviceID, rhs: DeviceID) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Bounds an unarchive may not cross; crossing one refuses the whole archive.
public struct ArchiveLimits: Sendable, Equatable {
    /// Total bytes of file content after decompression (zip-bomb guard).
    public var maxTotalBytes: Int64
    /// Number of entries of any kind.
    public var maxEntries: Int
    /// Path components below the bundle root.
    public var maxDepth: Int
    /// Bytes in one entry's path.
    public var maxPathLength: Int

    public init(maxTotalBytes: Int64 = 16 << 30, maxEntries: Int = 100_000,
                maxDepth: Int = 16, maxPathLength: Int = 1024) {
        self.maxTotalBytes = maxTotalBytes
        self.maxEntries = maxEntries
        self.maxDepth = maxDepth
        self.maxPathLength = maxPathLength
    }

    public static let `default` = ArchiveLimits()
}

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
    /// Bytes of file content per byte of archive (zip-bomb guard by ratio): a 1 MB archive
    /// may expand to `maxExpansionRatio` MB, but never less than `ratioFloorBytes` is allowed.
    /// Bundles are mostly zstd-compressed already, so a real one expands a few times at most.
    public var maxExpansionRatio: Int64
    /// Content any archive may expand to whatever its ratio (small archives of text).
    public var ratioFloorBytes: Int64

    public init(maxTotalBytes: Int64 = 16 << 30, maxEntries: Int = 100_000,
                maxDepth: Int = 16, maxPathLength: Int = 1024,
                maxExpansionRatio: Int64 = 100, ratioFloorBytes: Int64 = 64 << 20) {
        self.maxTotalBytes = maxTotalBytes
        self.maxEntries = maxEntries
        self.maxDepth = maxDepth
        self.maxPathLength = maxPathLength
        self.maxExpansionRatio = maxExpansionRatio
        self.ratioFloorBytes = ratioFloorBytes
    }

    /// The content bytes an archive of `archiveSize` bytes may expand to.
    public func maxContentBytes(forArchiveOf archiveSize: Int64) -> Int64 {
        let (byRatio, overflow) = archiveSize.multipliedReportingOverflow(by: maxExpansionRatio)
        return min(maxTotalBytes, max(ratioFloorBytes, overflow ? .max : byRatio))
    }

    public static let `default` = ArchiveLimits()
}

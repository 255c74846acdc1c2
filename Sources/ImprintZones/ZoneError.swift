/// An error raised by ImprintZones: every store, the chunker and the reassembler.
///
/// Errors are values with a stable ``Code`` plus a human-readable context string, and, where
/// one is known, the record (and chunk) they are about. Match on `code`, never on the message.
public struct ZoneError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case invalidArgument, zoneNotFound, zoneExists, recordNotFound, recordExists
            case assetNotFound, assetCorrupt, changeTokenExpired, payloadTooLarge, quotaExceeded
            case forbidden, gone, damagedRecord, io, invalidResponse, server, transport
            case missingChunk, duplicateChunk, inconsistentChunk, payloadHashMismatch
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }
        public var description: String { base.rawValue }

        /// An argument broke a rule of the API (a name too long, a limit out of range).
        public static let invalidArgument = Code(.invalidArgument)
        /// The zone does not exist (HTTP 404 `ZoneNotFound`).
        public static let zoneNotFound = Code(.zoneNotFound)
        /// `createZone` for a zone that exists (HTTP 409 `ZoneExists`).
        public static let zoneExists = Code(.zoneExists)
        /// No record of that name (HTTP 404 `RecordNotFound`).
        public static let recordNotFound = Code(.recordNotFound)
        /// A record of that name exists with another asset hash (HTTP 409 `RecordExists`).
        public static let recordExists = Code(.recordExists)
        /// The asset was never uploaded to the zone (HTTP 404 `AssetNotFound`, or 400 on save).
        public static let assetNotFound = Code(.assetNotFound)
        /// Asset bytes do not hash to their name (a damaged file, a hostile server).
        public static let assetCorrupt = Code(.assetCorrupt)
        /// The store does not know the change token (HTTP 410): fetch again from the start.
        public static let changeTokenExpired = Code(.changeTokenExpired)
        /// A body or an asset is larger than the store accepts (HTTP 413).
        public static let payloadTooLarge = Code(.payloadTooLarge)
        /// The owner's quota is full (HTTP 403 `QuotaExceeded`).
        public static let quotaExceeded = Code(.quotaExceeded)
        /// The caller may not use the zone (HTTP 401/403, e.g. `NotMember`).
        public static let forbidden = Code(.forbidden)
        /// The zone or snapshot expired or was deleted (HTTP 410 `Gone`).
        public static let gone = Code(.gone)
        /// A stored record file is truncated or altered; the error names the file.
        public static let damagedRecord = Code(.damagedRecord)
        /// A filesystem call failed.
        public static let io = Code(.io)
        /// The server's answer is not the contract's (undecodable JSON, wrong shape, hostile bytes).
        public static let invalidResponse = Code(.invalidResponse)
        /// The server answered with an error this client has no code for (`httpStatus` is set).
        public static let server = Code(.server)
        /// The HTTP request did not complete (connection refused, reset, timed out).
        public static let transport = Code(.transport)
        /// A chunk of a payload is absent; `chunkIndex` names it.
        public static let missingChunk = Code(.missingChunk)
        /// Two different records claim the same chunk of a payload.
        public static let duplicateChunk = Code(.duplicateChunk)
        /// A chunk's metadata or size disagrees with the rest of its payload.
        public static let inconsistentChunk = Code(.inconsistentChunk)
        /// The reassembled payload does not hash to `payloadHash`.
        public static let payloadHashMismatch = Code(.payloadHashMismatch)
    }

    /// The kind of failure.
    public let code: Code
    /// Free-form context for humans (not stable).
    public let context: String
    /// The record the error is about, when known.
    public let recordName: String?
    /// The chunk the error is about, when known.
    public let chunkIndex: Int?
    /// The HTTP status, for errors answered by a zone server.
    public let httpStatus: Int?

    /// An error with a code, context and what it is about.
    public init(_ code: Code, _ context: String = "", recordName: String? = nil, chunkIndex: Int? = nil, httpStatus: Int? = nil) {
        self.code = code
        self.context = context
        self.recordName = recordName
        self.chunkIndex = chunkIndex
        self.httpStatus = httpStatus
    }

    public var description: String {
        var text = "ZoneError(\(code))"
        if let httpStatus { text += " HTTP \(httpStatus)" }
        if let recordName { text += " record \(recordName)" }
        if let chunkIndex { text += " chunk \(chunkIndex)" }
        return context.isEmpty ? text : text + ": " + context
    }
}

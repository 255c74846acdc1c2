/// The outer, plaintext part of a reviewer snapshot: what the HTML file embeds (or a link's
/// zone record holds) around the ciphertext, and nothing else. It names the algorithms and
/// their parameters so the viewer needs no other knowledge; the content itself is only in
/// `payload`, sealed under a fresh random content key.
///
/// - Payload: `AES-256-GCM(contentKey, iv, deflate-raw(JSON(ReviewContent)), aad)` with
///   `aad` = ``associatedData(snapshotId:)``.
/// - Password form: `password` wraps the content key with a key from PBKDF2-SHA256
///   (`iterations` ≥ 600,000, 16-byte salt) under AES-256-GCM with the same `aad`.
/// - Link form: no `password`; the key travels in the link's fragment, which browsers never
///   send to a server.
public struct ReviewEnvelope: Codable, Sendable, Hashable {
    /// `imprint-review/1`.
    public static let currentFormat = "imprint-review/1"
    /// The least PBKDF2 iteration count this build writes or accepts (OWASP, PBKDF2-HMAC-SHA256).
    public static let minimumIterations = 600_000
    /// The most this build accepts (a hostile file must not make a reader spin for hours).
    public static let maximumIterations = 10_000_000

    public var format: String
    public var snapshotId: String
    /// Absent in the HTML of the link form (fetched from the zone record instead).
    public var payload: Sealed?
    public var password: PasswordWrap?
    public var link: LinkSource?

    public init(format: String, snapshotId: String, payload: Sealed?, password: PasswordWrap?, link: LinkSource?) {
        self.format = format
        self.snapshotId = snapshotId
        self.payload = payload
        self.password = password
        self.link = link
    }

    /// AES-GCM output: 12-byte `iv` and ciphertext with its 16-byte tag, both base64.
    public struct Sealed: Codable, Sendable, Hashable {
        public var iv: String
        public var data: String

        public init(iv: String, data: String) {
            self.iv = iv
            self.data = data
        }
    }

    /// The content key wrapped under a password.
    public struct PasswordWrap: Codable, Sendable, Hashable {
        /// `PBKDF2-SHA256`.
        public var kdf: String
        public var iterations: Int
        /// Base64, 16 bytes.
        public var salt: String
        public var wrappedKey: Sealed

        public init(kdf: String, iterations: Int, salt: String, wrappedKey: Sealed) {
            self.kdf = kdf
            self.iterations = iterations
            self.salt = salt
            self.wrappedKey = wrappedKey
        }
    }

    /// Where a link-form viewer fetches the snapshot and posts comments.
    public struct LinkSource: Codable, Sendable, Hashable {
        /// The zone server's origin, e.g. `http://127.0.0.1:8080`; empty: the page's own.
        public var server: String
        /// Empty: `share_<snapshotId>`.
        public var zoneId: String

        public init(server: String, zoneId: String) {
            self.server = server
            self.zoneId = zoneId
        }
    }

    /// The additional authenticated data of the payload and of the wrapped key.
    public static func associatedData(snapshotId: String) -> [UInt8] {
        Array("\(currentFormat) \(snapshotId)".utf8)
    }
}

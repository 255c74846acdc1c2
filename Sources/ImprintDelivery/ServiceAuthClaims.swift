/// The JOSE header of a service-auth token.
public struct ServiceAuthHeader: Codable, Hashable, Sendable {
    public var alg: String
    public var typ: String?
    public init(alg: String, typ: String? = "JWT") {
        self.alg = alg
        self.typ = typ
    }
}

/// The claims of a service-auth token (atproto style).
public struct ServiceAuthClaims: Codable, Hashable, Sendable {
    /// Caller DID.
    public var iss: String
    /// Service DID.
    public var aud: String
    /// The method NSID the token is good for.
    public var lxm: String
    public var iat: Int64
    public var exp: Int64
    public var jti: String

    public init(iss: String, aud: String, lxm: String, iat: Int64, exp: Int64, jti: String) {
        self.iss = iss
        self.aud = aud
        self.lxm = lxm
        self.iat = iat
        self.exp = exp
        self.jti = jti
    }
}

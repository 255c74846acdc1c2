import Foundation

/// `publishKeyPackage` input.
public struct PublishKeyPackageInput: Codable, Hashable, Sendable {
    public var keyPackage: Data
    public var cipherSuite: Int
    public var expiresAt: Date
    public init(keyPackage: Data, cipherSuite: Int, expiresAt: Date) {
        self.keyPackage = keyPackage
        self.cipherSuite = cipherSuite
        self.expiresAt = expiresAt
    }
}

/// `publishKeyPackage` output.
public struct PublishKeyPackageOutput: Codable, Hashable, Sendable {
    public var id: String
    public init(id: String) { self.id = id }
}

/// One key package handed out (and thereby consumed) by `getKeyPackages`.
public struct KeyPackageRef: Codable, Hashable, Sendable {
    public var did: String
    public var id: String
    public var cipherSuite: Int
    public var keyPackage: Data
    public init(did: String, id: String, cipherSuite: Int, keyPackage: Data) {
        self.did = did
        self.id = id
        self.cipherSuite = cipherSuite
        self.keyPackage = keyPackage
    }
}

/// `getKeyPackages` output.
public struct GetKeyPackagesOutput: Codable, Hashable, Sendable {
    public var keyPackages: [KeyPackageRef]
    public var missing: [String]
    public init(keyPackages: [KeyPackageRef], missing: [String]) {
        self.keyPackages = keyPackages
        self.missing = missing
    }
}

import Foundation

/// A KeyPackage message that is well-formed for the Delivery Service's structure check
/// (`KeyPackageShape`): the suite's key sizes, a basic credential naming `n`, a key_package
/// leaf source. Its keys and signatures are filler: the DS never verifies them (clients do),
/// so server tests need no MLS.
public func keyPackageBytes(_ n: Int, suite: Int = 1) -> Data {
    let sizes: (kem: Int, signature: Int) = switch suite {
    case 2: (65, 65)
    case 4, 6: (56, 57)
    case 5: (133, 133)
    case 7: (97, 97)
    default: (32, 32)
    }
    var out: [UInt8] = []
    func u16(_ v: Int) { out += [UInt8(v >> 8 & 0xff), UInt8(v & 0xff)] }
    func length(_ v: Int) {
        if v < 64 { out.append(UInt8(v)) } else { out += [UInt8(0x40 | v >> 8), UInt8(v & 0xff)] }
    }
    func opaque(_ bytes: [UInt8]) { length(bytes.count); out += bytes }
    func filler(_ count: Int, _ tag: UInt8) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: n &+ $0) ^ tag } }
    u16(1); u16(5); u16(1); u16(suite)
    opaque(filler(sizes.kem, 0x11))                       // init_key
    opaque(filler(sizes.kem, 0x22))                       // encryption_key
    opaque(filler(sizes.signature, 0x33))                 // signature_key
    u16(1); opaque(Array("member-\(n)".utf8))             // basic credential
    length(2); u16(1)                                     // capabilities: versions
    length(2); u16(suite)                                 // cipher_suites
    length(0); length(0)                                  // extensions, proposals
    length(2); u16(1)                                     // credentials
    out.append(1)                                         // leaf_node_source = key_package
    out += [UInt8](repeating: 0, count: 8) + [UInt8](repeating: 0xff, count: 8)  // lifetime
    length(0)                                             // leaf extensions
    opaque(filler(64, 0x44))                              // leaf signature
    length(0)                                             // KeyPackage extensions
    opaque(filler(64, 0x55))                              // signature
    return Data(out)
}

/// Base58 with the Bitcoin alphabet (multibase prefix `z`).
public enum Base58BTC {
    static let alphabet = Array("123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz".utf8)
    static let indexes: [Int8] = {
        var table = [Int8](repeating: -1, count: 128)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = Int8(index) }
        return table
    }()

    public static func encode(_ bytes: [UInt8]) -> String {
        let zeros = bytes.prefix { $0 == 0 }.count
        // Base-256 to base-58 by repeated division, digits little-endian.
        var digits: [UInt8] = []
        for byte in bytes.dropFirst(zeros) {
            var carry = Int(byte)
            for index in digits.indices {
                carry += Int(digits[index]) << 8
                digits[index] = UInt8(carry % 58)
                carry /= 58
            }
            while carry > 0 {
                digits.append(UInt8(carry % 58))
                carry /= 58
            }
        }
        let text = [UInt8](repeating: alphabet[0], count: zeros) + digits.reversed().map { alphabet[Int($0)] }
        return String(decoding: text, as: UTF8.self)
    }

    /// Nil for characters outside the alphabet.
    public static func decode(_ text: String) -> [UInt8]? {
        let characters = Array(text.utf8)
        let zeros = characters.prefix { $0 == alphabet[0] }.count
        var bytes: [UInt8] = []  // little-endian base-256
        for character in characters.dropFirst(zeros) {
            guard character < 128, indexes[Int(character)] >= 0 else { return nil }
            var carry = Int(indexes[Int(character)])
            for index in bytes.indices {
                carry += Int(bytes[index]) * 58
                bytes[index] = UInt8(carry & 0xff)
                carry >>= 8
            }
            while carry > 0 {
                bytes.append(UInt8(carry & 0xff))
                carry >>= 8
            }
        }
        return [UInt8](repeating: 0, count: zeros) + bytes.reversed()
    }
}

import Testing
@testable import ImprintBundle
import ImprintTestSupport

@Suite struct SnapshotFileTests {
    @Test func roundTripsAndDetectsEveryByteFlip() throws {
        let dir = TemporaryDirectory()
        let snapshot = SnapshotFile(coveredChanges: [record("a").hash, record("b").hash], snapshot: Array("engine bytes".utf8))
        try snapshot.write(to: dir.file("d.snapshot"))
        #expect(try SnapshotFile.read(at: dir.file("d.snapshot")) == snapshot)
        let bytes = snapshot.encoded()
        for i in 0..<bytes.count {
            var damaged = bytes
            damaged[i] ^= 0x01
            let error = #expect(throws: BundleError.self, "byte \(i)") { try SnapshotFile(decoding: damaged) }
            #expect(error?.code == .corrupt || error?.code == .unsupportedVersion, "byte \(i)")
        }
        for cut in 0..<bytes.count {
            #expect(throws: BundleError.self, "cut \(cut)") { try SnapshotFile(decoding: Array(bytes[0..<cut])) }
        }
    }

    @Test func hostileCountDoesNotAllocate() throws {
        var bytes = SnapshotFile.magic
        ChangeLogFormat.appendLE(UInt16(1), to: &bytes)
        ChangeLogFormat.appendLE(UInt16(0), to: &bytes)
        ChangeLogFormat.appendLE(UInt32.max, to: &bytes)
        ChangeLogFormat.appendLE(UInt64(0), to: &bytes)
        ChangeLogFormat.appendLE(CRC32C.checksum(bytes), to: &bytes)
        let error = #expect(throws: BundleError.self) { try SnapshotFile(decoding: bytes) }
        #expect(error?.code == .corrupt)
    }
}

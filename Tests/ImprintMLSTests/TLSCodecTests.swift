import Testing
@testable import ImprintMLS

@Suite struct TLSCodecTests {
    @Test func varintRoundTripAtBoundaries() throws {
        for v in [0, 1, 63, 64, 16383, 16384, (1 << 30) - 1] {
            var w = TLSWriter()
            w.writeVarint(v)
            #expect(w.bytes.count == (v < 64 ? 1 : v < 16384 ? 2 : 4))
            var r = TLSReader(w.bytes)
            #expect(Int(try r.readVarint()) == v)
            #expect(r.isAtEnd)
        }
    }

    @Test func rejectsNonMinimalVarint() {
        var r = TLSReader([0x40, 0x25])
        #expect(throws: MLSError.self) { try r.readVarint() }
        do { var r2 = TLSReader([0x40, 0x25]); _ = try r2.readVarint() } catch let e as MLSError {
            #expect(e.code == .nonMinimalVarint)
        } catch { Issue.record("wrong error type") }
        var r3 = TLSReader([0x80, 0x00, 0x3f, 0xff])
        #expect(throws: MLSError(.nonMinimalVarint, "16383 in 4 bytes")) { try r3.readVarint() }
    }

    @Test func rejectsReservedPrefixAndTruncation() {
        var r = TLSReader([0xc0, 0, 0, 0, 0, 0, 0, 1])
        #expect { try r.readVarint() } throws: { ($0 as? MLSError)?.code == .invalidVarint }
        var t = TLSReader([0x05, 1, 2])
        #expect { try t.readOpaque() } throws: { ($0 as? MLSError)?.code == .truncated }
        // A huge declared length must fail before allocating.
        var h = TLSReader([0xbf, 0xff, 0xff, 0xff, 0])
        #expect { try h.readOpaque() } throws: { ($0 as? MLSError)?.code == .truncated }
    }

    @Test func vectorsOptionalsAndFixedInts() throws {
        var w = TLSWriter()
        w.writeUInt16(0xabcd)
        w.writeUInt32(0x01020304)
        w.writeUInt64(0x0102030405060708)
        w.writeVector([UInt16(1), 2, 3]) { $0.writeUInt16($1) }
        w.writeOptional(UInt8(9)) { $0.writeUInt8($1) }
        w.writeOptional(UInt8?.none) { $0.writeUInt8($1) }
        var r = TLSReader(w.bytes)
        #expect(try r.readUInt16() == 0xabcd)
        #expect(try r.readUInt32() == 0x01020304)
        #expect(try r.readUInt64() == 0x0102030405060708)
        #expect(try r.readVector { try $0.readUInt16() } == [1, 2, 3])
        #expect(try r.readOptional { try $0.readUInt8() } == 9)
        #expect(try r.readOptional { try $0.readUInt8() } == nil)
        try r.finish()
        // An item overrunning its vector is an error, not a silent read past it.
        var bad = TLSReader([0x01, 0x00, 0x07])
        #expect(throws: MLSError.self) { try bad.readVector { try $0.readUInt16() } }
        var badOpt = TLSReader([0x02])
        #expect { try badOpt.readOptional { try $0.readUInt8() } } throws: { ($0 as? MLSError)?.code == .invalidValue }
    }
}

#if canImport(Glibc)
import ImprintEncoding
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Crypto
import Foundation
import Testing
@testable import ImprintBundle
import ImprintTestSupport
import ImprintFiles

@Suite struct AssetStoreTests {
    @Test func addGetListRemoveAndDedupe() throws {
        let dir = TemporaryDirectory("assets")
        let store = AssetStore(directory: dir.file("assets"))
        let a = try store.add(bytes: Array("hello".utf8))
        #expect(a.hex == "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824")
        let again = try store.add(bytes: Array("hello".utf8))
        #expect(again == a)
        let b = try store.add(bytes: [])
        #expect(b.hex == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(try store.list() == [.init(id: a, size: 5), .init(id: b, size: 0)].sorted { $0.id < $1.id })
        var out: [UInt8] = []
        try store.read(a) { out += $0 }
        #expect(out == Array("hello".utf8))
        #expect(try store.remove(a))
        #expect(try !store.remove(a))
        #expect(!store.contains(a))
        let missing = #expect(throws: BundleError.self) { try store.read(a) { _ in } }
        #expect(missing?.code == .notFound)
        // Only asset files in the directory: no temporaries left behind.
        #expect(try POSIX.listDirectory(store.directory) == [b.hex])
    }

    @Test func tamperedAssetFailsVerification() throws {
        let dir = TemporaryDirectory("assets")
        let store = AssetStore(directory: dir.file("assets"))
        let id = try store.add(bytes: Array("original".utf8))
        try writeFile(store.path(of: id), Array("tampered".utf8))
        #expect(try !store.verify(id))
        let error = #expect(throws: BundleError.self) { try store.export(id, to: dir.file("out")) }
        #expect(error?.code == .corrupt)
        #expect(!FileManager.default.fileExists(atPath: dir.file("out")))
        #expect(throws: BundleError.self) { try AssetID(hex: "ABC") }
        #expect(throws: BundleError.self) { try AssetID(hex: String(repeating: "G", count: 64)) }
    }

    /// A file many times the chunk size goes in and out in chunks: the reader is only ever
    /// asked for `chunkSize` bytes and peak memory does not grow with the file.
    @Test func largeAssetsStreamInChunks() throws {
        let dir = TemporaryDirectory("assets")
        let chunk = 64 << 10
        let store = AssetStore(directory: dir.file("assets"), chunkSize: chunk)
        let total = 96 << 20
        // Source file, written in pieces.
        let source = dir.file("big.bin")
        let fd = open(source, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        try #require(fd >= 0)
        var hasher = SHA256()
        var piece = [UInt8](repeating: 0, count: 1 << 20)
        for i in 0..<(total / piece.count) {
            for j in stride(from: 0, to: piece.count, by: 4096) { piece[j] = UInt8(truncatingIfNeeded: i &+ j) }
            hasher.update(data: piece)
            try POSIX.writeAll(fd, piece, path: source)
        }
        close(fd)
        let expected = Hex.encode(Array(hasher.finalize()))

        let input = open(source, O_RDONLY)
        defer { close(input) }
        var largestRequest = 0
        var calls = 0
        let id = try store.add { buffer in
            largestRequest = max(largestRequest, buffer.count)
            calls += 1
            return try POSIX.read(input, buffer, path: source)
        }
        #expect(id.hex == expected)
        #expect(largestRequest == chunk)
        #expect(calls > total / chunk)
        #expect(try store.size(of: id) == Int64(total))

        var largestChunkOut = 0
        var outHasher = SHA256()
        try store.read(id) { bytes in
            largestChunkOut = max(largestChunkOut, bytes.count)
            outHasher.update(bufferPointer: bytes)
        }
        #expect(Hex.encode(Array(outHasher.finalize())) == expected)
        #expect(largestChunkOut <= chunk)
        try store.export(id, to: dir.file("copy.bin"))
        #expect(try store.add(contentsOf: dir.file("copy.bin")) == id)
        let handle = try FileHandle(forReadingFrom: try store.url(of: id))
        defer { try? handle.close() }
        #expect(try store.add(from: handle) == id)
        #expect(try store.list().map(\.id) == [id])
        // The memory bound itself is checked on the `imprint` process alone
        // (`CLITests.assetsStreamInBoundedMemory`): this process's peak also counts every
        // test running beside this one.
    }

}

import Foundation
#if canImport(Glibc)
import Glibc
#endif
import ImprintServerTestSupport
import ImprintDelivery
import Testing

/// The `imprint-server` binary: options, startup on an empty data dir, SIGTERM exits 0.
@Suite struct ServerExecutableTests {
    @Test func servesOnDefaultSQLiteAndExitsZeroOnSIGTERM() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("imprint-exe-\(UUID().uuidString)")
        let (process, bound, output) = try await ServerExecutable.launchListening(
            ["--port", "0", "--data", data.path, "--service-did", "did:web:exe.test"], attempts: 200)
        defer { if process.isRunning { process.terminate() } }
        let client = DeliveryClient(baseURL: "http://127.0.0.1:\(bound)", serviceDID: "did:web:exe.test", signer: ServiceAuthSigner(), httpClient: TestHTTP.client)
        #expect(try await client.health().did == "did:web:exe.test")
        let convo = try await client.createConvo(CreateConvoInput(cipherSuite: 1))
        #expect(convo.convo.epoch == 0)
        #expect(FileManager.default.fileExists(atPath: data.appendingPathComponent("delivery.sqlite").path))

        kill(process.processIdentifier, SIGTERM)
        for _ in 0..<200 where process.isRunning { try await Task.sleep(for: .milliseconds(50)) }
        #expect(!process.isRunning)
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0)
        // One structured line per request, naming the method and the caller.
        #expect(output.value.contains("route=createConvo"))
        #expect(output.value.contains("status=200"))
    }

    /// SIGTERM closes a connection that never sent a request at once and waits for one whose
    /// body is still coming at most `--shutdown-grace`, however long its body may pause.
    @Test(.timeLimit(.minutes(3))) func sigtermWaitsAtMostTheShutdownGrace() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("imprint-exe-\(UUID().uuidString)")
        let (process, bound, _) = try await ServerExecutable.launchListening(
            ["--port", "0", "--data", data.path, "--service-did", RunningServer.serviceDID,
             "--shutdown-grace", "2", "--body-timeout", "100", "--idle-timeout", "100"], attempts: 200)
        defer { if process.isRunning { process.terminate() } }
        let unused = try await RawSocket.connect(port: bound)
        let stalled = try await RawSocket.connect(port: bound)
        try await stalled.send(try SlowAndBrokenClientTests.head(.createConvo, extra: "Content-Length: 100\r\n") + #"{"cipherSuite":"#)
        try await Task.sleep(for: .milliseconds(300))  // the head is read: a request in flight

        let signalled = ContinuousClock.now
        kill(process.processIdentifier, SIGTERM)
        #expect(await unused.outcome(timeout: .seconds(60)).closedByServer, "the unused connection is closed")
        for _ in 0..<1200 where process.isRunning { try await Task.sleep(for: .milliseconds(50)) }
        let took = ContinuousClock.now - signalled
        #expect(!process.isRunning, "still running \(took) after SIGTERM")
        #expect(took >= .seconds(2) && took < .seconds(50), "exited \(took) after SIGTERM, with a 2 s grace and a 100 s body timeout")
        #expect(process.terminationReason == .exit && process.terminationStatus == 0, "status \(process.terminationStatus)")
        #expect(await stalled.outcome(timeout: .seconds(5)).closedByServer)
    }

    @Test(arguments: [["--db", "mysql://nope"], ["--port", "99999"], ["--bogus"], ["--rate-limit", "0"]])
    func usageErrorsExitOneWithOneErrorLine(arguments: [String]) async throws {
        let (status, text) = try runToExit(arguments)
        #expect(status == 1, "\(text)")
        #expect(text.hasPrefix("error: "), "\(text)")
        #expect(text.split(separator: "\n").count == 1, "\(text)")
    }

    /// Runs the server with `arguments` until it exits; its status and stderr.
    func runToExit(_ arguments: [String]) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = try ServerExecutable.binary()
        process.arguments = arguments
        let stderr = Pipe()
        process.standardError = stderr
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }

    @Test func aDataPathThatIsAFileSaysSoInOneLine() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("imprint-server-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("plain-file").path
        _ = FileManager.default.createFile(atPath: file, contents: Data("x".utf8))
        for data in [file, file + "/below"] {
            let (status, text) = try runToExit(["--port", "0", "--data", data])
            #expect(status == 1, "\(text)")
            #expect(text.hasPrefix("error: cannot use data directory") && text.contains("is a file, not a directory"), "\(text)")
            #expect(text.split(separator: "\n").count == 1 && !text.contains("NSCocoaErrorDomain"), "\(text)")
        }
    }

    @Test func aPortInUseSaysWhatToDoInOneLine() throws {
        let taken = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(taken) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(taken, $0, length) == 0 && listen(taken, 1) == 0 && getsockname(taken, $0, &length) == 0 }
        }
        try #require(bound)
        let port = Int(UInt16(bigEndian: address.sin_port))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("imprint-server-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (status, text) = try runToExit(["--port", "\(port)", "--data", directory.path])
        #expect(status == 1, "\(text)")
        #expect(text.contains("error: 127.0.0.1:\(port) is already in use") && text.contains("--port"), "\(text)")
        #expect(text.split(separator: "\n").filter { $0.hasPrefix("error:") }.count == 1, "\(text)")
    }
}

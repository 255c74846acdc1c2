import Foundation
#if canImport(Glibc)
import Glibc
#endif
import ImprintDelivery
import ImprintZones
import Testing

/// `EndpointCircuit` with `HTTPZoneStore`: a server that accepts connections and never
/// answers (what a host that drops packets looks like) costs one timeout, then requests fail
/// at once until the backoff has passed; a server that answers closes the circuit.
@Suite struct EndpointCircuitTests {
    /// A TCP listener on loopback that never accepts: connections complete in the kernel's
    /// backlog and requests get no answer.
    final class Blackhole {
        let descriptor: Int32
        let port: Int

        init() throws {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard fd >= 0, bound == 0, listen(fd, 16) == 0 else {
                if fd >= 0 { close(fd) }
                throw POSIXError(.EADDRINUSE)
            }
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            descriptor = fd
            port = Int(UInt16(bigEndian: address.sin_port))
        }

        deinit { close(descriptor) }
    }

    @Test func aServerThatNeverAnswersCostsOneTimeoutPerBackoff() async throws {
        let blackhole = try Blackhole()
        var store = HTTPZoneStore(baseURL: "http://127.0.0.1:\(blackhole.port)", serviceDID: "did:web:nowhere",
                                  signer: ServiceAuthSigner())
        store.timeout = .milliseconds(700)
        let circuit = EndpointCircuit(firstBackoff: .seconds(2))
        store.circuit = circuit
        let clock = ContinuousClock()

        // The first request waits for its timeout, and opens the circuit.
        var started = clock.now
        await #expect { _ = try await store.createZone("doc_a", convoId: "a") } throws: { ($0 as? ZoneError)?.code == .transport }
        #expect(clock.now - started >= .milliseconds(600))
        #expect(circuit.isOpen)
        // While open: refused at once, saying when the server is asked again.
        started = clock.now
        await #expect { _ = try await store.fetchChanges(zoneId: "doc_a", since: nil, limit: 1) } throws: { error in
            (error as? ZoneError)?.code == .transport && "\(error)".contains("asked again in")
        }
        #expect(clock.now - started < .milliseconds(500))
        // After the backoff the server is asked again (and, still silent, the next backoff is longer).
        try await Task.sleep(for: .milliseconds(2100))
        #expect(!circuit.isOpen)
        started = clock.now
        await #expect { _ = try await store.createZone("doc_a", convoId: "a") } throws: { ($0 as? ZoneError)?.code == .transport }
        #expect(clock.now - started >= .milliseconds(600))
        #expect(circuit.isOpen)
        // An answer, whatever it says, closes it.
        circuit.answered()
        #expect(!circuit.isOpen)
    }

    @Test func backoffDoublesUpToItsMaximum() throws {
        let circuit = EndpointCircuit(firstBackoff: .seconds(5), maximumBackoff: .seconds(12))
        circuit.failed()
        #expect(throws: ZoneError.self) { try circuit.check("s") }
        circuit.failed()
        circuit.failed()
        do {
            try circuit.check("server")
            Issue.record("the circuit should be open")
        } catch {
            // 5, then 10, then 12 (the maximum), not 20.
            #expect(error.context.contains("asked again in 12 s"), "\(error)")
        }
        circuit.answered()
        #expect(throws: Never.self) { try circuit.check("s") }
    }
}

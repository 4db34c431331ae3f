// two-device-sync: two devices' notes synced through a PostgreSQL server,
// each step a command, so that Tests/sync/run.sh can run them as separate
// processes, beside the sqlite3 shell and Python, and kill an uploader.
//
//   two-device-sync server-setup SOCKET_DIR
//   two-device-sync edit DEVICE_DB DEVICE WRITER TRANSACTIONS SEED JOURNAL
//   two-device-sync upload DEVICE_DB DEVICE SOCKET_DIR [PAUSE_MS]
//   two-device-sync download DEVICE_DB SOCKET_DIR
//   two-device-sync check A_DB B_DB SOCKET_DIR JOURNAL_DIR
//   two-device-sync bench DEVICE_DB SOCKET_DIR CHANGES
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
func usage() -> Never {
    FileHandle.standardError.write(Data("two-device-sync: unknown arguments \(arguments); see main.swift\n".utf8))
    exit(2)
}
/// A line on standard output at once (run.sh watches the uploader's).
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

/// Runs `body` with a connection to the server, closed however it ends.
func withServer<Result>(_ socket: String, _ body: (Server) async throws -> Result) async throws -> Result {
    let server = try await Server.connect(socket: socket)
    do {
        let result = try await body(server)
        try await server.close()
        return result
    } catch {
        try? await server.close()
        throw error
    }
}

do {
    switch (arguments.first, arguments.count) {
    case ("server-setup", 2):
        try await withServer(arguments[1]) { server in try await server.createSchema() }
    case ("edit", 7):
        guard let transactions = Int(arguments[4]), let seed = UInt64(arguments[5]) else { usage() }
        try edit(pool: Device.open(arguments[1]), device: arguments[2], writer: arguments[3],
                 transactions: transactions, seed: seed, journal: arguments[6])
    case ("upload", 4), ("upload", 5):
        let pause = arguments.count == 5 ? Int(arguments[4]) ?? 0 : 0
        let pool = try Device.open(arguments[1])
        let sent = try await withServer(arguments[3]) { server in
            try await upload(device: arguments[2], pool: pool, server: server, pause: .milliseconds(pause)) { say($0) }
        }
        say("uploaded \(sent) transactions")
    case ("download", 3):
        let pool = try Device.open(arguments[1])
        say("downloaded \(try await withServer(arguments[2]) { server in try await download(pool: pool, server: server) }) versions")
    case ("check", 5):
        let devices = [("A", try Device.open(arguments[1])), ("B", try Device.open(arguments[2]))]
        let failures = try await withServer(arguments[3]) { server in
            try await check(devices: devices, server: server, journals: arguments[4])
        }
        for failure in failures { say("FAIL \(failure)") }
        exit(failures.isEmpty ? 0 : 1)
    case ("bench", 4):
        guard let count = Int(arguments[3]) else { usage() }
        try await withServer(arguments[2]) { server in try await bench(path: arguments[1], server: server, count: count) }
    default:
        usage()
    }
} catch {
    FileHandle.standardError.write(Data("two-device-sync \(arguments.first ?? ""): \(error)\n".utf8))
    exit(1)
}

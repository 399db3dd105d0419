import { errorMessage, type Logger } from "../../log.ts";
import type { StaffBackend } from "../embedded-database.ts";
import { BackendRestarted, type Restart } from "../pglite-thread.ts";
import {
  authenticationSasl,
  authenticationSaslContinue,
  authenticationSaslFinal,
  backendKeyData,
  backendMessage,
  concatBytes,
  copyInResponse,
  cString,
  type ErrorFields,
  errorResponse,
  int32s,
  negotiateProtocolVersion,
  readyForQuery,
  splitMessages,
} from "./backend-messages.ts";
import { COPY_FROM_STDIN_LIMIT, copyFromStdin, GUARD } from "./copy-from-stdin.ts";
import type { DroppedConnections } from "./dropped-connections.ts";
import { AUTHENTICATING_LIMITS, ByteQueue, COPY_IN_LIMITS, type Frame, MAX_STARTUP_PACKET_LENGTH, SERVING_LIMITS } from "./protocol-framing.ts";
import { SCRAM_SHA_256, type ScramSecret, ScramError, scramExchange, parseSaslInitialResponse } from "./scram.ts";
import { cancelKeyLength, parseStartupPacket } from "./startup-packet.ts";

/** The one database and the one role the port serves: PGlite has one of each. */
const DATABASE = "postgres";
const ROLE = "postgres";

/** One client connection, as the session sees it. */
export interface Connection {
  write(bytes: Uint8Array): void;
  /** Sends what was written, then closes. */
  end(): void;
}

/** What the port gives its sessions once the embedded database is migrated (`SqlPort.serve`). */
export interface Served {
  backend: StaffBackend;
  /** The `postgres` role's SCRAM secret, derived once from SQL_PASSWORD. */
  secret: ScramSecret;
  /** Keys the mock salts of the roles that do not exist (db/sql-port/scram.ts). */
  mockNonce: Uint8Array;
}

/** What a session needs of the port it belongs to. */
export interface SessionContext {
  served: Promise<Served>;
  /**
   * How long a staff transaction may keep the backend once an API statement waits for it: then it
   * is rolled back and its session ended, as Postgres' idle_in_transaction_session_timeout does.
   */
  graceMs: number;
  log: Logger;
  drops: DroppedConnections;
  /** A place among the port's sessions (false: too many already); taken once the startup packet is read. */
  admit(session: StaffSession): boolean;
  /** A cancel key for an authenticated session, registered until it ends. */
  register(session: StaffSession, keyLength: number): { processId: number; secret: Uint8Array };
  /** A CancelRequest: cancels the session with that key, if any; never answered, as Postgres answers none. */
  cancel(processId: number, secret: Uint8Array): void;
  /** The session ended: its place and its key are free again. */
  leave(session: StaffSession): void;
}

type Phase = "startup" | "authenticating" | "serving" | "copy-in" | "ended";

/** A COPY FROM STDIN being received: its query, then each CopyData, fed to PGlite together at its end. */
interface CopyIn {
  frames: Uint8Array[];
  bytes: number;
}

/**
 * One client connection: the startup phase (SSL and GSSAPI requests refused with 'N', cancel
 * requests, the startup packet), SCRAM-SHA-256, then the protocol, run in turns of the one
 * backend (db/backend-turns.ts). A session keeps its turn until Postgres is ready for its next
 * query outside a transaction, so an API statement never runs inside a staff transaction or
 * between a client's Parse and its Sync; each turn ends with the session's settings reset. The
 * messages that arrive together go to PGlite together, and the session reads no more of its
 * client while they run, as a Postgres backend reads its next message only once idle.
 */
export class StaffSession {
  #phase: Phase = "startup";
  #queue = new ByteQueue();
  #sslDone = false;
  #gssDone = false;
  #user = "";
  #database = "";
  #version = 0;
  #exchange: ReturnType<typeof scramExchange> | undefined;
  #served: Served | undefined;
  #release: (() => void) | undefined;
  #graceTimer: ReturnType<typeof setTimeout> | undefined;
  #authenticationTimer: ReturnType<typeof setTimeout> | undefined;
  #work: Promise<void> = Promise.resolve();
  #running = false;
  #waitingForTurn: AbortController | undefined;
  #copyIn: CopyIn | undefined;
  #ignoreTillSync = false;

  constructor(
    private readonly connection: Connection,
    private readonly context: SessionContext,
    authenticationTimeoutMs: number,
  ) {
    this.#authenticationTimer = setTimeout(() => this.#drop("authentication timeout"), authenticationTimeoutMs);
  }

  /** Whether the session is over (a method, so no narrowing of the phase survives an await). */
  #ended(): boolean {
    return this.#phase === "ended";
  }

  /** Bytes from the client; resolves once the session may read more (it reads nothing while its statements run). */
  async receive(chunk: Uint8Array): Promise<void> {
    if (this.#ended()) return;
    this.#queue.push(chunk);
    // Before authentication a client has at most one packet in flight; more is not Postgres talking.
    if ((this.#phase === "startup" || this.#phase === "authenticating") && this.#queue.length > 4 + MAX_STARTUP_PACKET_LENGTH) {
      return this.#drop("sent more than one packet before authentication");
    }
    while (!this.#ended()) {
      const progressed = this.#phase === "startup"
        ? await this.#startup()
        : this.#phase === "authenticating"
        ? await this.#authenticate()
        : this.#serve();
      await this.#work;
      if (!progressed) return;
    }
  }

  /** The client closed the connection (or it failed). */
  closed(): void {
    this.#end();
  }

  /** A CancelRequest named this session: stop what it runs, or what it waits to run, as Postgres' cancel would. */
  cancel(): void {
    if (this.#phase === "copy-in") this.#finishCopy(failCopy("canceling statement due to user request"));
    else if (this.#running) this.#served!.backend.interrupt({ reason: "a staff statement was cancelled (psql's Ctrl-C)", by: this });
    else this.#waitingForTurn?.abort();
  }

  /** The backend was replaced by someone else's cancel, or crashed: this session's state in it is gone, so is the session. */
  backendLost(restart: Restart): void {
    if (restart.by === this || (this.#phase !== "serving" && this.#phase !== "copy-in")) return;
    this.#releaseTurn();
    const message = restart.by
      ? "terminating connection because the embedded database restarted to cancel another session's statement"
      : "terminating connection because the embedded database crashed";
    // The restart itself is logged (embedded_database_restarted).
    this.#fatal({ severity: "FATAL", code: restart.by ? "57P01" : "57P02", message, detail: restart.reason, hint: "Connect again and repeat your command." }, false);
  }

  async #startup(): Promise<boolean> {
    // A TLS ClientHello where the startup packet belongs (direct SSL, Postgres 17's sslnegotiation=direct).
    if (!this.#sslDone && !this.#gssDone && this.#queue.length > 0 && this.#queue.peek(1)[0] === 0x16) {
      this.#drop("a TLS ClientHello (direct SSL): the SQL port has no TLS");
      return false;
    }
    const packet = this.#queue.startupPacket();
    if ("incomplete" in packet) return false;
    if ("invalidLength" in packet) {
      this.#drop(packet.invalidLength);
      return false;
    }
    const request = parseStartupPacket(packet, { sslDone: this.#sslDone, gssDone: this.#gssDone });
    switch (request.kind) {
      case "ssl":
      case "gssenc": {
        this.connection.write(new TextEncoder().encode("N"));
        if (request.kind === "ssl") this.#sslDone = true;
        else this.#gssDone = true;
        if (this.#queue.length > 0) {
          // What follows the request was sent before the answer, so unencrypted whatever the answer.
          const what = request.kind === "ssl" ? "SSL request" : "GSSAPI encryption request";
          this.#fatal({
            severity: "FATAL",
            code: "08P01",
            message: `received unencrypted data after ${what}`,
            detail: "This could be either a client-software bug or evidence of an attempted man-in-the-middle attack.",
          });
          return false;
        }
        return true;
      }
      case "cancel":
        this.context.cancel(request.processId, request.secret);
        this.#end();
        return false;
      case "refused":
        if (request.fatal) this.#fatal(request.fatal);
        else this.#drop(request.reason);
        return false;
    }
    if (!this.context.admit(this)) {
      this.#fatal({ severity: "FATAL", code: "53300", message: "sorry, too many clients already" });
      return false;
    }
    this.#user = request.user;
    this.#database = request.database;
    this.#version = request.version;
    if (request.negotiate) this.connection.write(negotiateProtocolVersion(request.negotiate.version, request.negotiate.unrecognized));
    this.#served = await this.context.served;
    if (this.#ended()) return false;
    this.connection.write(authenticationSasl([SCRAM_SHA_256]));
    this.#phase = "authenticating";
    return true;
  }

  async #authenticate(): Promise<boolean> {
    const frame = this.#queue.message(AUTHENTICATING_LIMITS);
    if ("incomplete" in frame) return false;
    if ("unexpectedType" in frame) {
      // The client closes with a Terminate when it has no password to give (psql without one).
      if (frame.unexpectedType === 0x58) this.#end();
      else this.#fatal({ severity: "FATAL", code: "08P01", message: `expected SASL response, got message type ${frame.unexpectedType}` });
      return false;
    }
    if ("invalidLength" in frame) {
      // Postgres fails the authentication on an unreadable SASL message.
      this.#fatal({ severity: "FATAL", code: "28P01", message: `password authentication failed for user "${this.#user}"` });
      return false;
    }
    const served = this.#served!;
    try {
      let input: Uint8Array | null = frame.body;
      if (!this.#exchange) {
        const initial = parseSaslInitialResponse(frame.body);
        if (initial.mechanism !== SCRAM_SHA_256) {
          throw new ScramError({ severity: "FATAL", code: "08P01", message: "client selected an invalid SASL authentication mechanism" });
        }
        this.#exchange = scramExchange({ user: this.#user, secret: this.#user === ROLE ? served.secret : undefined, mockNonce: served.mockNonce });
        input = initial.response;
      }
      const step = await this.#exchange.step(input);
      if (this.#ended()) return false;
      if ("continue" in step) {
        this.connection.write(authenticationSaslContinue(step.continue));
        return true;
      }
      this.connection.write(authenticationSaslFinal(step.final));
    } catch (error) {
      if (!(error instanceof ScramError)) throw error;
      this.#fatal(error.fields);
      return false;
    }
    if (this.#database !== DATABASE) {
      this.connection.write(backendMessage("R", int32s(0)));
      this.#fatal({ severity: "FATAL", code: "3D000", message: `database "${this.#database}" does not exist` });
      return false;
    }
    const answer = await served.backend.startupAnswer().catch((error) => {
      this.#fatal({ severity: "FATAL", code: "57P03", message: "the embedded database is not open", detail: errorMessage(error) });
      return undefined;
    });
    if (!answer || this.#ended()) return false;
    clearTimeout(this.#authenticationTimer);
    const key = this.context.register(this, cancelKeyLength(this.#version));
    // PGlite's own BackendKeyData names its one backend; this session's names the session.
    const { messages } = splitMessages(answer);
    this.connection.write(concatBytes(...messages.map((message) => message[0] === 0x4b ? backendKeyData(key.processId, key.secret) : message)));
    this.#phase = "serving";
    return true;
  }

  /**
   * Reads every whole message there is; those that run go to PGlite in one batch. What the
   * session writes itself, or a violation that ends it, comes after what the messages before it
   * answer, as from a Postgres that reads one message after another.
   */
  #serve(): boolean {
    const batch: Uint8Array[] = [];
    let endsReady = false;
    const send = () => {
      if (batch.length > 0) this.#enqueue(concatBytes(...batch.splice(0)), endsReady, false);
    };
    const then = (action: () => void) => {
      send();
      this.#work = this.#work.then(action);
    };
    for (;;) {
      const frame = this.#queue.message(this.#phase === "copy-in" ? COPY_IN_LIMITS : SERVING_LIMITS);
      if ("incomplete" in frame) break;
      if ("invalidLength" in frame) {
        then(() => this.#drop(frame.invalidLength));
        return false;
      }
      if ("unexpectedType" in frame) {
        const type = frame.unexpectedType;
        if (this.#phase === "copy-in") {
          this.#copyIn = undefined;
          then(() => {
            const hex = type.toString(16).toUpperCase().padStart(2, "0");
            this.connection.write(errorResponse({ severity: "ERROR", code: "08P01", message: `unexpected message type 0x${hex} during COPY from stdin` }));
            this.#fatal({ severity: "FATAL", code: "08P01", message: "terminating connection because protocol synchronization was lost" });
          });
        } else {
          then(() => this.#fatal({ severity: "FATAL", code: "08P01", message: `invalid frontend message type ${type}` }));
        }
        return false;
      }
      if (this.#phase === "copy-in") {
        this.#copyFrame(frame);
        continue;
      }
      if (this.#ignoreTillSync) {
        // What followed a cancelled exchange, up to its Sync, as Postgres skips after an error.
        if (frame.type === "S") {
          this.#ignoreTillSync = false;
          this.connection.write(readyForQuery("I"));
        }
        continue;
      }
      const bytes = frameBytes(frame);
      switch (frame.type) {
        case "X":
          then(() => this.#end());
          return false;
        case "d":
        case "c":
        case "f":
          // Outside COPY, Postgres ignores these: what a client still sends after a COPY failed.
          continue;
        case "Q": {
          const end = frame.body.indexOf(0);
          const copy = copyFromStdin(new TextDecoder().decode(frame.body.subarray(0, end < 0 ? frame.body.length : end)));
          if (copy) {
            then(() => this.connection.write(copyInResponse(copy.binary, copy.columns)));
            this.#copyIn = { frames: [bytes], bytes: bytes.length };
            this.#phase = "copy-in";
            continue;
          }
          batch.push(bytes, GUARD);
          endsReady = true;
          continue;
        }
        case "E":
          batch.push(bytes, GUARD);
          endsReady = false;
          continue;
        default:
          batch.push(bytes);
          // A Sync and a function call end with ReadyForQuery; anything else is mid-exchange.
          endsReady = frame.type === "S" || frame.type === "F";
      }
    }
    send();
    return false;
  }

  #copyFrame(frame: Frame) {
    const copy = this.#copyIn!;
    switch (frame.type) {
      case "d":
        if (copy.bytes + frame.body.length > COPY_FROM_STDIN_LIMIT) {
          return this.#finishCopy(failCopy(`more than ${COPY_FROM_STDIN_LIMIT / 1024 / 1024} MB of data, which the embedded database holds in memory for one COPY FROM STDIN: split the file`));
        }
        copy.frames.push(frameBytes(frame));
        copy.bytes += 5 + frame.body.length;
        return;
      case "c":
      case "f":
        return this.#finishCopy(frameBytes(frame));
      default:
        // Flush and Sync: what libpq may send without noticing the COPY; Postgres ignores them there.
        return;
    }
  }

  /** Ends the COPY being received: the query, its data and `end` (CopyDone or CopyFail) go to PGlite together. */
  #finishCopy(end: Uint8Array) {
    const copy = this.#copyIn!;
    this.#copyIn = undefined;
    this.#phase = "serving";
    this.#enqueue(concatBytes(...copy.frames, end), true, true);
  }

  #enqueue(messages: Uint8Array, endsReady: boolean, copyIn: boolean) {
    this.#work = this.#work.then(() => this.#run(messages, endsReady, copyIn)).catch((error) => {
      this.context.log("error", "sql_session_failed", { error: errorMessage(error) });
      this.#end();
    });
  }

  async #run(messages: Uint8Array, endsReady: boolean, copyIn: boolean) {
    if (this.#ended()) return;
    const { backend } = this.#served!;
    if (!this.#release) {
      this.#waitingForTurn = new AbortController();
      try {
        this.#release = await backend.turns.take({ onContended: () => this.#contended(), signal: this.#waitingForTurn.signal });
      } catch {
        if (!this.#ended()) this.#cancelled(endsReady);
        return;
      } finally {
        this.#waitingForTurn = undefined;
      }
    }
    let inTransaction: boolean;
    this.#running = true;
    try {
      const write = (bytes: Uint8Array) => this.connection.write(bytes);
      ({ inTransaction } = await backend.run(messages, copyIn ? withoutFirstCopyInResponse(write) : write));
    } catch (error) {
      if (!(error instanceof BackendRestarted)) throw error;
      // A fresh backend: nothing of this turn is left in it to reset.
      this.#releaseTurn();
      if (error.restart.by === this) this.#cancelled(endsReady);
      return;
    } finally {
      this.#running = false;
    }
    if (endsReady && !inTransaction) await this.#giveBack();
  }

  /** Postgres' answer to a cancelled statement; an extended-protocol exchange is then skipped to its Sync. */
  #cancelled(endsReady: boolean) {
    this.connection.write(errorResponse({ severity: "ERROR", code: "57014", message: "canceling statement due to user request" }));
    if (endsReady) this.connection.write(readyForQuery("I"));
    else this.#ignoreTillSync = true;
  }

  #contended() {
    this.#graceTimer ??= setTimeout(() => {
      this.#work = this.#work.then(() => this.#endHeldTransaction());
    }, this.context.graceMs);
  }

  #endHeldTransaction() {
    if (!this.#release || this.#ended()) return;
    this.context.log("warn", "sql_session_ended", { reason: "its transaction held the database while the API waited", graceMs: this.context.graceMs });
    this.#fatal({ severity: "FATAL", code: "25P03", message: "terminating connection due to idle-in-transaction timeout: the API needed the database" }, false);
  }

  /** Ends the turn with the session's transaction rolled back and its settings reset, for the next user. */
  async #giveBack() {
    if (!this.#release) return;
    try {
      await this.#served!.backend.reset();
    } catch (error) {
      // A backend replaced meanwhile has nothing of this turn to reset.
      if (!(error instanceof BackendRestarted)) throw error;
    } finally {
      this.#releaseTurn();
    }
  }

  #releaseTurn() {
    clearTimeout(this.#graceTimer);
    this.#graceTimer = undefined;
    this.#release?.();
    this.#release = undefined;
  }

  /** Sends a FATAL error and ends the session, as Postgres ends a backend; logged as a drop unless its cause logs itself. */
  #fatal(fields: ErrorFields, logAsDrop = true) {
    if (this.#ended()) return;
    if (logAsDrop) this.context.drops.note(fields.message);
    this.connection.write(errorResponse(fields));
    this.#end();
  }

  /** Closes without a word, as Postgres closes a connection whose stream is out of step. */
  #drop(reason: string) {
    if (this.#ended()) return;
    this.context.drops.note(reason);
    this.#end();
  }

  #end() {
    if (this.#ended()) return;
    this.#phase = "ended";
    clearTimeout(this.#authenticationTimer);
    this.#waitingForTurn?.abort();
    this.connection.end();
    this.context.leave(this);
    this.#work = this.#work.then(() => this.#giveBack()).catch((error) => {
      this.context.log("error", "sql_session_failed", { error: errorMessage(error) });
    });
  }
}

/** A whole message as it came: type, length, body. */
function frameBytes(frame: Frame): Uint8Array {
  return backendMessage(frame.type, frame.body);
}

function failCopy(reason: string): Uint8Array {
  return backendMessage("f", cString(reason));
}

/**
 * `write` without the first message PGlite answers a fed COPY with, when that is its
 * CopyInResponse: the client had it from the port before it sent the data.
 */
function withoutFirstCopyInResponse(write: (bytes: Uint8Array) => void): (bytes: Uint8Array) => void {
  let head: Uint8Array | undefined = new Uint8Array(0);
  return (bytes) => {
    if (!head) return write(bytes);
    head = concatBytes(head, bytes);
    const { messages, rest } = splitMessages(head);
    if (messages.length === 0) return;
    const [first, ...others] = messages;
    write(concatBytes(...(first[0] === 0x47 ? [] : [first]), ...others, rest));
    head = undefined;
  };
}

/**
 * The event store that makes Streamable HTTP resumable (MCP 2025-11-25, "Resumability
 * and Redelivery"): each SSE event the server sends gets an id, the transport opens every
 * stream with a priming event (an id and empty data, with `retry:`), and a client that
 * lost a stream reconnects with `Last-Event-ID` to get what it missed.
 *
 * One store per connection, in memory, bounded: it keeps the last MAX_EVENTS events and
 * at most MAX_BYTES of them, oldest dropped first; an id that has been dropped (or was
 * never issued) cannot be resumed from, and the client starts over.
 */
import type { EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'

export const MAX_EVENTS = 1000
export const MAX_BYTES = 8 << 20

interface Stored {
  id: string
  stream: string
  message: JSONRPCMessage
  bytes: number
}

export class BoundedEventStore implements EventStore {
  private readonly events: Stored[] = []
  private readonly byId = new Map<string, Stored>()
  private next = 0
  private bytes = 0

  constructor(
    private readonly maxEvents = MAX_EVENTS,
    private readonly maxBytes = MAX_BYTES,
  ) {}

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    // The sequence number comes first so ids sort; the stream id follows for reading back.
    const id = `${(this.next++).toString(36).padStart(8, '0')}_${streamId}`
    const stored = { id, stream: streamId, message, bytes: JSON.stringify(message).length + id.length }
    this.events.push(stored)
    this.byId.set(id, stored)
    this.bytes += stored.bytes
    while (this.events.length > this.maxEvents || (this.bytes > this.maxBytes && this.events.length > 1)) {
      const old = this.events.shift() as Stored
      this.byId.delete(old.id)
      this.bytes -= old.bytes
    }
    return id
  }

  async getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    return this.byId.get(eventId)?.stream
  }

  async replayEventsAfter(lastEventId: string, { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> }): Promise<string> {
    const last = this.byId.get(lastEventId)
    if (!last) throw new Error(`event ${lastEventId} is unknown or no longer kept`)
    let after = false
    for (const event of [...this.events]) {
      if (event === last) {
        after = true
        continue
      }
      // Priming events (empty messages) are not sent again.
      if (after && event.stream === last.stream && Object.keys(event.message).length > 0) await send(event.id, event.message)
    }
    return last.stream
  }

  /** How many events are kept (for tests). */
  get size(): number {
    return this.events.length
  }
}

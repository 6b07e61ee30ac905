// Minimal types for nfc-pcsc 0.8.1 (it ships none): only what the bridge child uses.
declare module 'nfc-pcsc' {
  import { EventEmitter } from 'node:events';

  export interface Card {
    atr?: Buffer;
    standard?: string;
    type?: string;
    uid?: string;
  }

  export class Reader extends EventEmitter {
    readonly name: string;
    autoProcessing: boolean;
    card: Card | null;
    transmit(data: Buffer, responseMaxLength: number): Promise<Buffer>;
    close(): void;
    on(event: 'card', listener: (card: Card) => void): this;
    on(event: 'card.off', listener: (card: Card) => void): this;
    on(event: 'error', listener: (err: Error) => void): this;
    on(event: 'end', listener: () => void): this;
  }

  export class ACR122Reader extends Reader {
    led(led: number, blinking: number[]): Promise<void>;
    setBuzzerOutput(enabled?: boolean): Promise<void>;
  }

  export class NFC extends EventEmitter {
    constructor(logger?: unknown);
    close(): void;
    on(event: 'reader', listener: (reader: Reader) => void): this;
    on(event: 'error', listener: (err: Error) => void): this;
  }
}

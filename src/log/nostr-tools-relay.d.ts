/**
 * `nostr-tools/relay` (a package subpath export, which this project's
 * `moduleResolution: node` does not read), typed by the package's own
 * declarations. Its `Relay` connects with the WebSocket class given to its
 * `useWebSocketImplementation` (Node 20 has none built in); the `Relay` of
 * the package root is a separate copy that would not see it.
 */
declare module 'nostr-tools/relay' {
  export { Relay, useWebSocketImplementation } from 'nostr-tools/lib/types/relay';
}

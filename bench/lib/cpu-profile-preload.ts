/**
 * Preloaded (`node -r .../cpu-profile-preload.js`) into a server process
 * started with an IPC channel, to profile only part of its life: the message
 * `profile-start` starts V8's CPU profiler (inspector, in process),
 * `profile-stop` stops it and writes the profile to `AER1_CPU_PROFILE` (a
 * path), then answers `profile-written` (or `profile-failed`). Start-up and
 * shutdown stay out of the profile, which `--cpu-prof` cannot do. (Not a
 * signal: Nest's shutdown hooks close the application on SIGUSR2.)
 */
import { Session } from 'node:inspector';
import { writeFileSync } from 'node:fs';

const target = process.env.AER1_CPU_PROFILE;
if (target) {
  const session = new Session();
  session.connect();
  process.on('message', (m) => {
    if (m === 'profile-start') {
      session.post('Profiler.enable', () => session.post('Profiler.setSamplingInterval', { interval: 200 }, () => session.post('Profiler.start', () => process.send?.('profile-started'))));
    } else if (m === 'profile-stop') {
      session.post('Profiler.stop', (err, r) => {
        if (!err) writeFileSync(target, JSON.stringify(r.profile));
        process.send?.(err ? 'profile-failed' : 'profile-written');
      });
    }
  });
  // The channel must not keep the server alive on its own.
  process.channel?.unref();
}

import { freePort } from './process';

describe('freePort', () => {
  it('never hands out one port twice, though the kernel gives a just-closed port out again', async () => {
    // Without the memory of what it handed out, 200 binds here repeated a port about 3 times.
    const ports: number[] = [];
    for (let i = 0; i < 300; i++) ports.push(await freePort());
    expect(new Set(ports).size).toBe(ports.length);
  });
});

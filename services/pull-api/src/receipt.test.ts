import { randomBytes } from 'node:crypto';
import { createReceiptHandles } from './receipt';

const handles = createReceiptHandles(randomBytes(32));
const lease = { consumerId: 'cconsumeraaa2', deliveryId: '42', generation: 3 };

describe('receipt handles', () => {
  it('round-trip for the consumer they were issued to', () => {
    const handle = handles.issue(lease);
    expect(handle).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(handle).not.toContain('42.3');
    expect(handles.open(lease.consumerId, handle)).toEqual(lease);
  });

  it("refuse another consumer's handle, a forged generation or delivery, another key, and junk", () => {
    const handle = handles.issue(lease);
    expect(handles.open('cconsumerbbb2', handle)).toBeNull();
    const [v, d, , tag] = Buffer.from(handle, 'base64url').toString('utf8').split('.');
    for (const forged of [`${v}.${d}.4.${tag}`, `${v}.43.3.${tag}`]) {
      expect(handles.open(lease.consumerId, Buffer.from(forged).toString('base64url'))).toBeNull();
    }
    expect(createReceiptHandles(randomBytes(32)).open(lease.consumerId, handle)).toBeNull();
    for (const junk of ['', 'x', '!!!', 'a'.repeat(600), Buffer.from('r1.0.0.x').toString('base64url')]) {
      expect(handles.open(lease.consumerId, junk)).toBeNull();
    }
  });

  it('refuses a key shorter than 32 bytes', () => {
    expect(() => createReceiptHandles(randomBytes(16))).toThrow(/32 bytes/);
  });
});

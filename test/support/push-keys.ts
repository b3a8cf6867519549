import { createECDH } from 'node:crypto';

/** Web Push credentials as the secret holds them: a VAPID pair (base64url raw P-256 point and scalar), a subject. */
export const vapidCredentials = () => {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  return {
    public_key: ecdh.getPublicKey().toString('base64url'),
    private_key: ecdh.getPrivateKey().toString('base64url'),
    subject: 'mailto:push@notify.test',
  };
};

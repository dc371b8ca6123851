// The sandbox end of the model gateway: listen on the container's own loopback and relay every
// byte to the unix socket bind-mounted from the host, where agentbench's gateway adds the API key.
// The container has no network; this socket is its only way out, and it leads to the gateway only.
// usage: node forwarder.js PORT SOCKET
"use strict";
const net = require("net");
const port = Number(process.argv[2]);
const socketPath = process.argv[3];
const server = net.createServer((client) => {
  const upstream = net.connect(socketPath);
  client.pipe(upstream);
  upstream.pipe(client);
  const end = () => { client.destroy(); upstream.destroy(); };
  client.on("error", end);
  upstream.on("error", end);
  client.on("close", end);
  upstream.on("close", end);
});
server.on("error", (err) => { console.error(`forwarder: ${err.message}`); process.exit(3); });
server.listen(port, "127.0.0.1", () => console.error(`forwarder: 127.0.0.1:${port} -> ${socketPath}`));

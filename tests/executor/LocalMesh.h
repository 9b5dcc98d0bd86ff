#pragma once
// A world of TCP meshes as threads of one test process on 127.0.0.1: the same sockets,
// rendezvous and reader threads as separate processes on separate nodes.
#include <gtest/gtest.h>

#include <memory>
#include <thread>
#include <vector>

#include "executor/dist/Socket.h"
#include "executor/dist/TcpMesh.h"

namespace mario::test {

using Meshes = std::vector<std::unique_ptr<dist::TcpMesh>>;

// A port nobody listens on right now: bind port 0, read what the kernel chose, close.
inline int freePort() {
    auto probe = dist::Socket::listenOn(0);
    EXPECT_TRUE(probe.ok());
    return probe.ok() ? probe->localPort() : 0;
}

// Connects `world` ranks, one thread each; a rank that fails to connect is null.
inline Meshes connectLocalWorld(int world) {
    const int port = freePort();
    Meshes meshes(static_cast<std::size_t>(world));
    std::vector<std::thread> threads;
    for (int r = 0; r < world; ++r)
        threads.emplace_back([&, r] {
            auto mesh = dist::TcpMesh::connect(dist::LaunchEnv{r, world, r, "127.0.0.1", port, port}, 5.0);
            if (mesh.ok()) meshes[static_cast<std::size_t>(r)] = std::move(mesh.value());
            else ADD_FAILURE() << mesh.error().message;
        });
    for (auto& t : threads) t.join();
    return meshes;
}

}  // namespace mario::test

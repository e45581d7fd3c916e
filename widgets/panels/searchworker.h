#pragma once

#include <QMetaObject>
#include <QObject>
#include <QPointer>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <thread>
#include <utility>

namespace railyard {

// One search at a time off the GUI thread, with a cancel flag the engine checks (the Planner
// dock's training and serving searches). The result and any progress reach the receiver on its
// own thread, and only while that search is the current one: a search cancelled or replaced
// drops what it still sends. Owned by the receiver, whose destruction cancels and waits.
class SearchWorker
{
public:
    // Runs `f` on the receiver's thread, if the search that asked is still the current one.
    using Post = std::function<void(std::function<void()>)>;

    SearchWorker() = default;
    SearchWorker(const SearchWorker &) = delete;
    SearchWorker &operator=(const SearchWorker &) = delete;
    ~SearchWorker() { cancel(); }

    // Starts `work(cancel, post)` on a thread (after cancelling one that runs); `done(result)`
    // then runs on `receiver`'s thread unless the search was cancelled or replaced since.
    template<class Work, class Done>
    void start(QObject *receiver, Work work, Done done)
    {
        cancel();
        const std::uint64_t generation = ++m_generation;
        auto flag = std::make_shared<std::atomic<bool>>(false);
        m_flag = flag;
        m_running = true;
        QPointer<QObject> self(receiver);
        // The receiver owns this worker and its destructor joins the thread: `this` and
        // `self` outlive it, and the queued calls check both before they touch anything.
        Post post = [this, self, generation](std::function<void()> f) {
            QMetaObject::invokeMethod(
                    self.data(),
                    [this, self, generation, f = std::move(f)] {
                        if (self && generation == m_generation)
                            f();
                    },
                    Qt::QueuedConnection);
        };
        m_thread = std::thread([this, self, generation, flag, post, work, done]() mutable {
            using Result = decltype(work(*flag, post));
            auto result = std::make_shared<Result>(work(*flag, post));
            QMetaObject::invokeMethod(
                    self.data(),
                    [this, self, generation, result, done] {
                        if (!self || generation != m_generation)
                            return;
                        join();
                        m_running = false;
                        done(std::move(*result));
                    },
                    Qt::QueuedConnection);
        });
    }

    // Stops the search that runs (its result is dropped) and waits for its thread; true when
    // one was running.
    bool cancel()
    {
        if (m_flag)
            m_flag->store(true);
        join(); // the engine checks the flag between configurations
        const bool was = m_running;
        if (m_running) {
            m_running = false;
            ++m_generation; // its result, maybe already queued, is dropped
        }
        return was;
    }
    // A search runs (its result not delivered yet).
    bool isRunning() const { return m_running; }

private:
    void join()
    {
        if (m_thread.joinable())
            m_thread.join();
    }

    std::thread m_thread;
    std::shared_ptr<std::atomic<bool>> m_flag;
    bool m_running = false;
    std::uint64_t m_generation = 0;
};

} // namespace railyard

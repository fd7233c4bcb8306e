/*
 * A Java file with most kinds of members, for the window-versus-whole-file differential test.
 */
package org.example.cache;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/** A small cache with most kinds of members. */
@SuppressWarnings("unchecked")
public final class LruCache<K, V extends Comparable<V>> implements Cache<K, V> {
    private static final int DEFAULT_CAPACITY = 16;
    private static final int[] PRIMES = {2, 3, 5, 7, 11};
    private static final Map<String, Integer> NAMES = new HashMap<>();
    private final Object lock = new Object();
    private int capacity;
    private int hits, misses = 0;
    private final Function<K, V> loader = key -> {
        return null;
    };
    private final Runnable onEvict = new Runnable() {
        @Override
        public void run() {
            evictions++;
        }
    };
    private int evictions;

    static {
        NAMES.put("default", DEFAULT_CAPACITY);
        NAMES.put("large", DEFAULT_CAPACITY * 8);
    }

    {
        capacity = DEFAULT_CAPACITY;
    }

    public LruCache() {
        this(DEFAULT_CAPACITY);
    }

    public LruCache(int capacity) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity: " + capacity);
        }
        this.capacity = capacity;
    }

    @Override
    public V get(K key) {
        synchronized (lock) {
            Node<K, V> node = find(key);
            if (node == null) {
                misses++;
                return null;
            }
            hits++;
            moveToFront(node);
            return node.value;
        }
    }

    @Override
    public void put(K key, V value) {
        synchronized (lock) {
            Node<K, V> node = find(key);
            if (node != null) {
                node.value = value;
                moveToFront(node);
                return;
            }
            insert(new Node<>(key, value));
            while (size() > capacity) {
                evictLast();
            }
        }
    }

    private Node<K, V> find(K key) {
        for (Node<K, V> n = head; n != null; n = n.next) {
            if (n.key.equals(key)) {
                return n;
            }
        }
        return null;
    }

    private void moveToFront(Node<K, V> node) {
        unlink(node);
        insert(node);
    }

    private void insert(Node<K, V> node) {
        node.next = head;
        head = node;
        count++;
    }

    private void unlink(Node<K, V> node) {
        Node<K, V> prev = null;
        for (Node<K, V> n = head; n != null; prev = n, n = n.next) {
            if (n == node) {
                if (prev == null) {
                    head = n.next;
                } else {
                    prev.next = n.next;
                }
                count--;
                return;
            }
        }
    }

    private void evictLast() {
        Node<K, V> prev = null;
        for (Node<K, V> n = head; n != null && n.next != null; n = n.next) {
            prev = n;
        }
        if (prev != null) {
            prev.next = null;
            count--;
            onEvict.run();
        }
    }

    public int size() {
        return count;
    }

    public double hitRate() {
        int total = hits + misses;
        return total == 0 ? 0.0 : (double) hits / total;
    }

    public List<K> keys() {
        List<K> out = new ArrayList<>();
        for (Node<K, V> n = head; n != null; n = n.next) {
            out.add(n.key);
        }
        return out;
    }

    public static int nextPrime(int n) {
        for (int p : PRIMES) {
            if (p >= n) {
                return p;
            }
        }
        return n | 1;
    }

    private Node<K, V> head;
    private int count;

    static final class Node<K, V> {
        final K key;
        V value;
        Node<K, V> next;

        Node(K key, V value) {
            this.key = key;
            this.value = value;
        }

        @Override
        public String toString() {
            return key + "=" + value;
        }
    }

    enum Policy {
        LRU("least recently used") {
            @Override
            int score(int age, int uses) {
                return age;
            }
        },
        LFU("least frequently used") {
            @Override
            int score(int age, int uses) {
                return -uses;
            }
        };

        private final String description;

        Policy(String description) {
            this.description = description;
        }

        Policy() {
            this("unnamed");
        }

        abstract int score(int age, int uses);

        String describe() {
            return name() + ": " + description;
        }
    }

    interface Listener<K> {
        void evicted(K key);

        default void loaded(K key) {
            evicted(key);
        }
    }

    @interface Tuned {
        int value() default 1;

        String[] tags() default {};
    }
}

interface Cache<K, V> {
    V get(K key);

    void put(K key, V value);
}

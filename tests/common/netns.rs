//! Separate hosts for test processes: network namespaces the test makes (`ip netns`), each
//! joined to the host by a veth pair with a /30 of its own in 10.213.0.0/16, and nothing else
//! (no route out: a process inside reaches only the host's end of its pair). Names carry the
//! test's PID, so parallel runs do not meet; a [`Hosts`] removes its namespaces and links when
//! dropped, a failing test included. Needs root and `ip`: [`Hosts::make`] says why not otherwise,
//! and the test then runs its processes on the host and says so.

use std::net::Ipv4Addr;
use std::process::Command;

/// One namespace: its name and the two ends' addresses.
pub struct Host {
    pub name: String,
    /// The host's end of the pair (where a server for this namespace binds).
    pub outside: Ipv4Addr,
    /// The namespace's end.
    pub inside: Ipv4Addr,
    link: String,
}

/// The namespaces made by one test.
pub struct Hosts(pub Vec<Host>);

fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip").args(args).output().map_err(|e| format!("ip {}: {e}", args.join(" ")))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("ip {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()))
    }
}

impl Hosts {
    /// `count` namespaces named `zdb<pid>n<i>`, or why they could not be made (whatever was made
    /// is removed again).
    pub fn make(count: usize) -> Result<Hosts, String> {
        let pid = std::process::id();
        // A /24 per run (from its PID) that no address of the host is in already.
        let taken = Command::new("ip").args(["-4", "-o", "addr", "show"]).output().map_err(|e| format!("ip: {e}"))?;
        let taken = String::from_utf8_lossy(&taken.stdout).into_owned();
        let third = (0..250u32)
            .map(|k| ((pid + k) % 250) as u8)
            .find(|t| !taken.contains(&format!("10.213.{t}.")))
            .ok_or("no free /24 in 10.213.0.0/16")?;
        let mut hosts = Hosts(Vec::new());
        for i in 0..count {
            let name = format!("zdb{pid}n{i}");
            let link = format!("zdb{pid}h{i}");
            let peer = format!("zdb{pid}p{i}");
            let outside = Ipv4Addr::new(10, 213, third, 4 * i as u8 + 1);
            let inside = Ipv4Addr::new(10, 213, third, 4 * i as u8 + 2);
            ip(&["netns", "add", &name])?;
            hosts.0.push(Host { name: name.clone(), outside, inside, link: link.clone() });
            ip(&["link", "add", &link, "type", "veth", "peer", "name", &peer])?;
            ip(&["link", "set", &peer, "netns", &name])?;
            ip(&["addr", "add", &format!("{outside}/30"), "dev", &link])?;
            ip(&["link", "set", &link, "up"])?;
            ip(&["netns", "exec", &name, "ip", "addr", "add", &format!("{inside}/30"), "dev", &peer])?;
            ip(&["netns", "exec", &name, "ip", "link", "set", &peer, "up"])?;
            ip(&["netns", "exec", &name, "ip", "link", "set", "lo", "up"])?;
        }
        Ok(hosts)
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        for host in &self.0 {
            // Removing the namespace removes the end inside, and with it the pair.
            let _ = ip(&["netns", "del", &host.name]);
            let _ = ip(&["link", "del", &host.link]);
        }
    }
}
